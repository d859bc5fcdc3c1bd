// transport/fault/fault_transport.cc: the fault-injecting decorator (see fault_transport.h).
#include "transport/fault/fault_transport.h"

#include <optional>
#include <random>
#include <string>
#include <vector>

namespace bsp::transport {
namespace {

class FaultTransport final : public Transport {
 public:
  FaultTransport(std::unique_ptr<Transport> inner, const FaultSpec& spec, int pid)
      : inner_(std::move(inner)),
        spec_(spec),
        generator_(spec.seed * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(pid) + 1),
        name_("fault+" + std::string(inner_->name())) {}

  std::string_view name() const override { return name_; }
  Capabilities capabilities() const override { return Capabilities{inner_->capabilities().mtu, false}; }
  std::string local_address() override { return inner_->local_address(); }
  void connect(const std::vector<std::string>& addresses) override { inner_->connect(addresses); }

  SendStatus send(int peer, std::span<const std::byte> frame) override {
    ++counts_.frames;
    if (chance(spec_.drop)) {
      ++counts_.dropped;
      return SendStatus::sent;
    }
    std::span<const std::byte> out = frame;
    if (chance(spec_.corrupt) && !frame.empty()) {
      ++counts_.corrupted;
      scratch_.assign(frame.begin(), frame.end());
      std::size_t bit = std::uniform_int_distribution<std::size_t>(0, frame.size() * 8 - 1)(generator_);
      scratch_[bit / 8] ^= static_cast<std::byte>(1u << (bit % 8));
      out = scratch_;
    }
    if (!held_ && chance(spec_.reorder)) {
      ++counts_.reordered;
      held_ = Held{peer, std::vector<std::byte>(out.begin(), out.end())};
      return SendStatus::sent;  // goes out after the next frame (or at flush)
    }
    if (inner_->send(peer, out) != SendStatus::sent) {
      --counts_.frames;
      return SendStatus::busy;
    }
    if (chance(spec_.dup)) {
      ++counts_.duplicated;
      inner_->send(peer, out);
    }
    if (held_) release_held();  // overtaken by this frame now; if busy, flush() sends it
    return SendStatus::sent;
  }

  std::size_t receive(FrameSink& sink, std::size_t max_frames) override {
    return inner_->receive(sink, max_frames);
  }

  bool flush() override {
    bool held_gone = !held_ || release_held();
    return inner_->flush() && held_gone;
  }

  int wait_fd() const override { return inner_->wait_fd(); }

  const FaultCounts& counts() const { return counts_; }

 private:
  struct Held {
    int peer;
    std::vector<std::byte> bytes;
  };

  bool chance(double p) {
    return p > 0 && std::uniform_real_distribution<double>(0, 1)(generator_) < p;
  }

  // Sends the held-back frame; false while the inner transport is busy.
  bool release_held() {
    if (inner_->send(held_->peer, held_->bytes) != SendStatus::sent) return false;
    held_.reset();
    return true;
  }

  std::unique_ptr<Transport> inner_;
  FaultSpec spec_;
  std::mt19937_64 generator_;
  std::string name_;
  std::optional<Held> held_;
  std::vector<std::byte> scratch_;
  FaultCounts counts_;
};

}  // namespace

std::unique_ptr<Transport> wrap_with_faults(std::unique_ptr<Transport> inner, std::string_view spec, int pid) {
  return std::make_unique<FaultTransport>(std::move(inner), parse_fault_spec(spec), pid);
}

const FaultCounts* fault_counts(const Transport& transport) {
  auto* fault = dynamic_cast<const FaultTransport*>(&transport);
  return fault == nullptr ? nullptr : &fault->counts();
}

}  // namespace bsp::transport
