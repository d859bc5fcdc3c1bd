// experiments/send_path.cc: what the reliable layer's sender costs per frame in user
// space, without a kernel: an 8 MiB source sent in MTU-sized payloads through one
// ProtocolCore (pid 0) whose frames a second core (pid 1) in the same process checks,
// copies out and acknowledges. Only pid 0's calls are timed (send, and taking the acks),
// so the figure is the sender's share of a bulk put over udp or nic: the copy into the
// pool with the payload's MAC, the header, the seal and the bookkeeping. Between two
// emulated hosts the nic sender's core is the bound, so this is what it adds to the
// kernel's send.
// Run: bazel run -c opt //experiments:send_path -- [--mtu=1500] [--rounds=200]
#include <chrono>
#include <cstdio>
#include <cstring>
#include <span>
#include <vector>

#include "bench/bench_flags.h"
#include "recovery/protocol_core.h"

namespace {

using namespace bsp;
using Clock = std::chrono::steady_clock;

// Keeps the frames a core hands over: spans into its pool, which hold until acknowledged,
// and every frame is delivered before the acks go back.
class Outbox final : public recovery::FrameOutput {
 public:
  std::size_t send_batch(std::span<const transport::OutFrame> frames) override {
    for (const transport::OutFrame& frame : frames) frames_.push_back(frame.bytes);
    return frames.size();
  }
  std::vector<std::span<const std::byte>> frames_;
};

// Appends what arrives in order to a destination of the source's size.
class Destination final : public recovery::PayloadSink {
 public:
  explicit Destination(std::size_t size) : bytes_(size) {}
  void on_payload(int, std::span<const std::byte> payload) override { append(payload.size(), payload.data()); }
  void on_peer_lost(int peer, std::string_view why) override {
    std::fprintf(stderr, "send_path: peer %d lost: %.*s\n", peer, static_cast<int>(why.size()), why.data());
    std::exit(1);
  }
  std::span<std::byte> payload_room(int, std::size_t size) override {
    if (at_ + size > bytes_.size()) at_ = 0;
    return {bytes_.data() + at_, size};
  }
  void append(std::size_t size, const std::byte* from) {
    if (at_ + size > bytes_.size()) at_ = 0;
    std::memcpy(bytes_.data() + at_, from, size);
    at_ += size;
  }

 private:
  std::vector<std::byte> bytes_;
  std::size_t at_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  if (bench::wants_help(argc, argv, "usage: send_path [--mtu=1500] [--rounds=200]\n")) return 0;
  bench::Flags flags(argc, argv);
  const std::size_t mtu = static_cast<std::size_t>(flags.number("mtu", 1500));
  const int rounds = static_cast<int>(flags.number("rounds", 200));
  constexpr std::size_t kSource = 8u << 20;
  std::vector<std::byte> source(kSource);
  for (std::size_t i = 0; i < kSource; ++i) source[i] = static_cast<std::byte>(i * 131 + 7);

  recovery::SteadyClock clock;
  recovery::CoreConfig config{.pid = 0, .nprocs = 2, .job_id = 7, .mtu = mtu};
  config.secret[0] = 1;
  Outbox to_receiver, to_sender;
  recovery::ProtocolCore sender(config, clock, to_receiver);
  config.pid = 1;
  recovery::ProtocolCore receiver(config, clock, to_sender);
  Destination destination(kSource), nowhere(1 << 16);
  const std::size_t piece = sender.max_payload();

  Clock::duration sender_time{};
  std::size_t frames = 0;
  auto deliver = [&] {
    for (std::span<const std::byte> frame : to_receiver.frames_) receiver.on_frame(0, frame, destination);
    to_receiver.frames_.clear();
    receiver.service(false);
    const Clock::time_point start = Clock::now();
    for (std::span<const std::byte> frame : to_sender.frames_) sender.on_frame(1, frame, nowhere);
    sender.service(false);
    sender_time += Clock::now() - start;
    to_sender.frames_.clear();
  };
  // The clock is read around each run of sends between two deliveries, not each send.
  for (int round = 0; round < rounds; ++round) {
    Clock::time_point start = Clock::now();
    for (std::size_t at = 0; at < kSource;) {
      const std::size_t size = std::min(piece, kSource - at);
      if (sender.send(1, {source.data() + at, size}) == recovery::SendResult::ok) {
        at += size;
        ++frames;
      } else {
        sender_time += Clock::now() - start;
        deliver();
        start = Clock::now();
      }
    }
    sender_time += Clock::now() - start;
  }
  deliver();
  const double ns = std::chrono::duration<double, std::nano>(sender_time).count();
  std::printf("mtu,frames,sender_ns_per_frame\n%zu,%zu,%.1f\n", mtu, frames, ns / static_cast<double>(frames));
}
