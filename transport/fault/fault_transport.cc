// transport/fault/fault_transport.cc: the fault-injecting decorator (see fault_transport.h).
#include "transport/fault/fault_transport.h"

#include "transport/forwarding_transport.h"

#include <optional>
#include <random>
#include <string>
#include <vector>

namespace bsp::transport {
namespace {

class FaultTransport final : public ForwardingTransport, private TransmitHooks {
 public:
  FaultTransport(std::unique_ptr<Transport> inner, const FaultSpec& spec, int pid)
      : ForwardingTransport(std::move(inner)),
        spec_(spec),
        generator_(spec.seed * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(pid) + 1),
        name_("fault+" + std::string(this->inner().name())) {}

  std::string_view name() const override { return name_; }
  Capabilities capabilities() const override {
    Capabilities capabilities = inner().capabilities();
    capabilities.reliable = false;
    capabilities.authenticated_links = false;
    return capabilities;
  }

  // Over a transport that runs the hook (nic), the hook is forwarded so the production
  // path runs, and corruption happens after it, on the frame as it leaves: the layer
  // above rewrites and reseals frames in the hook, which would otherwise heal (and hide)
  // a bit flipped at send().
  TransmitHooks* transmit_hooks() override { return inner().transmit_hooks() ? this : nullptr; }

  SendStatus send(int peer, std::span<const std::byte> frame) override {
    ++counts_.frames;
    if (chance(spec_.drop)) {
      ++counts_.dropped;
      return SendStatus::sent;
    }
    std::span<const std::byte> out = frame;
    if (corrupt_at_send_ && chance(spec_.corrupt) && !frame.empty()) {
      scratch_.assign(frame.begin(), frame.end());
      flip_a_bit(scratch_);
      out = scratch_;
    }
    if (!held_ && chance(spec_.reorder)) {
      ++counts_.reordered;
      held_ = Held{peer, std::vector<std::byte>(out.begin(), out.end())};
      return SendStatus::sent;  // goes out after the next frame (or at flush)
    }
    if (inner().send(peer, out) != SendStatus::sent) {
      --counts_.frames;
      return SendStatus::busy;
    }
    if (chance(spec_.dup)) {
      ++counts_.duplicated;
      inner().send(peer, out);
    }
    if (held_) release_held();  // overtaken by this frame now; if busy, flush() sends it
    return SendStatus::sent;
  }

  // Joined and sent through send(), so a gathered frame meets the same faults.
  SendStatus send_gathered(int peer, std::span<const std::byte> head, std::span<const std::byte> body) override {
    return Transport::send_gathered(peer, head, body);
  }

  // With drops as the only fault, the frames that survive go on to the inner transport
  // as one batch (udp segments runs of them, so the loss tests exercise that path); the
  // one draw per frame as frame by frame. Any other fault: frame by frame.
  std::size_t send_batch(std::span<const OutFrame> frames) override {
    if (spec_.corrupt > 0 || spec_.reorder > 0 || spec_.dup > 0 || held_)
      return Transport::send_batch(frames);  // frame by frame through send()
    survivors_.clear();
    survivor_at_.clear();
    for (std::size_t i = 0; i < frames.size(); ++i) {
      ++counts_.frames;
      if (chance(spec_.drop)) {
        ++counts_.dropped;
        continue;
      }
      survivors_.push_back(frames[i]);
      survivor_at_.push_back(i);
    }
    std::size_t taken = survivors_.empty() ? 0 : inner().send_batch(survivors_);
    if (taken == survivors_.size()) return frames.size();
    // Refused from survivor `taken` on: it and every frame after it count as not sent
    // (the dropped ones among them are drawn again when the caller sends again).
    std::size_t consumed = survivor_at_[taken];
    std::size_t not_sent = frames.size() - consumed;
    counts_.frames -= not_sent;
    counts_.dropped -= not_sent - (survivors_.size() - taken);
    return consumed;
  }

  bool flush() override {
    bool held_gone = !held_ || release_held();
    return inner().flush() && held_gone;
  }

  const FaultCounts& counts() const { return counts_; }

 private:
  void set_transmit_hook(TransmitHook hook) override {
    TransmitHooks* inner_hooks = inner().transmit_hooks();
    corrupt_at_send_ = !hook;
    if (!hook) return inner_hooks->set_transmit_hook(nullptr);
    inner_hooks->set_transmit_hook([this, hook = std::move(hook)](int peer, std::span<std::byte> frame) {
      hook(peer, frame);
      if (chance(spec_.corrupt) && !frame.empty()) flip_a_bit(frame);
    });
  }

  struct Held {
    int peer;
    std::vector<std::byte> bytes;
  };

  void flip_a_bit(std::span<std::byte> frame) {
    ++counts_.corrupted;
    std::size_t bit = std::uniform_int_distribution<std::size_t>(0, frame.size() * 8 - 1)(generator_);
    frame[bit / 8] ^= static_cast<std::byte>(1u << (bit % 8));
  }

  bool chance(double p) { return p > 0 && std::uniform_real_distribution<double>(0, 1)(generator_) < p; }

  // Sends the held-back frame; false while the inner transport is busy.
  bool release_held() {
    if (inner().send(held_->peer, held_->bytes) != SendStatus::sent) return false;
    held_.reset();
    return true;
  }

  FaultSpec spec_;
  std::mt19937_64 generator_;
  std::string name_;
  std::optional<Held> held_;
  std::vector<std::byte> scratch_;
  std::vector<OutFrame> survivors_;       // send_batch: the frames not dropped
  std::vector<std::size_t> survivor_at_;  // and their positions in the batch
  bool corrupt_at_send_ = true;
  FaultCounts counts_;
};

}  // namespace

std::unique_ptr<Transport> wrap_with_faults(std::unique_ptr<Transport> inner, std::string_view spec, int pid) {
  return std::make_unique<FaultTransport>(std::move(inner), parse_fault_spec(spec), pid);
}

const FaultCounts* fault_counts(const Transport& transport) {
  for (const Transport* layer = &transport; layer != nullptr; layer = layer->wrapped()) {
    if (auto* fault = dynamic_cast<const FaultTransport*>(layer)) return &fault->counts();
  }
  return nullptr;
}

}  // namespace bsp::transport
