// tests/recovery/memory_network.cc: the in-memory lossy network of the protocol tests.
#include "tests/recovery/memory_network.h"

#include <algorithm>
#include <cstddef>
#include <cstring>

namespace bsp::recovery::testing {

class MemoryNetwork::Output final : public FrameOutput {
 public:
  Output(MemoryNetwork& network, int pid) : network_(network), pid_(pid) {}
  std::size_t send_batch(std::span<const transport::OutFrame> frames) override {
    for (const transport::OutFrame& frame : frames) network_.submit(pid_, frame.peer, frame.bytes);
    return frames.size();
  }

 private:
  MemoryNetwork& network_;
  int pid_;
};

MemoryNetwork::MemoryNetwork(int nprocs, ManualClock& clock, Duration latency, Duration delay, Duration per_frame)
    : clock_(clock),
      latency_(latency),
      delay_(delay),
      per_frame_(per_frame),
      busy_until_(static_cast<std::size_t>(nprocs), clock.now()),
      queues_(static_cast<std::size_t>(nprocs)) {
  for (int pid = 0; pid < nprocs; ++pid) outputs_.push_back(std::make_unique<Output>(*this, pid));
}

MemoryNetwork::~MemoryNetwork() = default;

FrameOutput& MemoryNetwork::output(int pid) { return *outputs_[static_cast<std::size_t>(pid)]; }

void MemoryNetwork::submit(int from, int to, std::span<const std::byte> frame) {
  wire::Header header;
  std::memcpy(&header, frame.data(), wire::kHeaderSize);
  FrameEvent event;
  event.from = from;
  event.to = to;
  event.type = static_cast<wire::FrameType>(header.type);
  event.seq = header.seq;
  event.index = counts_[{from, to, static_cast<std::uint8_t>(header.type)}]++;
  std::vector<std::byte> bytes(frame.begin(), frame.end());
  switch (rule_ ? rule_(event) : Fate::deliver) {
    case Fate::deliver:
      enqueue(from, to, std::move(bytes), latency_);
      break;
    case Fate::drop:
      ++dropped_;
      break;
    case Fate::duplicate:
      ++duplicated_;
      enqueue(from, to, bytes, latency_);
      enqueue(from, to, std::move(bytes), latency_ + delay_);
      break;
    case Fate::corrupt:
      ++corrupted_;
      if (bytes.size() / 2 >= offsetof(wire::Header, check) && bytes.size() / 2 < offsetof(wire::Header, check) + 2) {
        ++corrupted_check_field_;
      }
      bytes[bytes.size() / 2] ^= std::byte{0x20};
      enqueue(from, to, std::move(bytes), latency_);
      break;
    case Fate::delay: {
      // Arrives `delay` after everything already queued for the destination: reordered.
      ++delayed_;
      Time arrival = std::max(clock_.now() + latency_, busy_until_[static_cast<std::size_t>(to)]) + delay_;
      queues_[static_cast<std::size_t>(to)].emplace(std::pair{arrival, order_++}, InFlight{from, std::move(bytes)});
      break;
    }
  }
}

void MemoryNetwork::enqueue(int from, int to, std::vector<std::byte> bytes, Duration after) {
  Time& busy = busy_until_[static_cast<std::size_t>(to)];
  Time arrival = std::max(clock_.now() + after, busy);
  busy = arrival + per_frame_;
  queues_[static_cast<std::size_t>(to)].emplace(std::pair{arrival, order_++}, InFlight{from, std::move(bytes)});
}

std::size_t MemoryNetwork::deliver(int pid, ProtocolCore& core, PayloadSink& sink) {
  auto& queue = queues_[static_cast<std::size_t>(pid)];
  std::size_t delivered = 0;
  while (!queue.empty() && queue.begin()->first.first <= clock_.now()) {
    InFlight frame = std::move(queue.begin()->second);
    queue.erase(queue.begin());
    delivered += core.on_frame(frame.from, frame.bytes, sink);
  }
  return delivered;
}

Time MemoryNetwork::next_arrival() const {
  Time next = Time::max();
  for (const auto& queue : queues_) {
    if (!queue.empty()) next = std::min(next, queue.begin()->first.first);
  }
  return next;
}

bool MemoryNetwork::idle() const {
  for (const auto& queue : queues_) {
    if (!queue.empty()) return false;
  }
  return true;
}

}  // namespace bsp::recovery::testing
