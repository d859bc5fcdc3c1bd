// tests/recovery/memory_network.h: an in-memory lossy network between ProtocolCores, with
// a manual clock, for deterministic protocol tests: every frame passes a fault rule that
// may drop, duplicate, corrupt or delay (reorder) it, then arrives `latency` later; each
// destination takes one frame per `per_frame` (its link rate), so a burst spreads out in
// time as on a real network.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <tuple>
#include <vector>

#include "recovery/clock.h"
#include "recovery/protocol_core.h"
#include "recovery/wire.h"

namespace bsp::recovery::testing {

// What the rule sees of a frame: its link, its type, and how many frames of that type
// went over that directed link before it (first transmissions and resends alike).
struct FrameEvent {
  int from = 0;
  int to = 0;
  wire::FrameType type = wire::FrameType::data;
  std::uint32_t seq = 0;
  std::uint64_t index = 0;
};

enum class Fate { deliver, drop, duplicate, corrupt, delay };

using FaultRule = std::function<Fate(const FrameEvent&)>;

class MemoryNetwork {
 public:
  MemoryNetwork(int nprocs, ManualClock& clock, Duration latency, Duration delay, Duration per_frame = Duration(0));
  ~MemoryNetwork();

  void set_rule(FaultRule rule) { rule_ = std::move(rule); }
  FrameOutput& output(int pid);

  // Hands every frame due at pid by now to core; returns the payloads delivered.
  std::size_t deliver(int pid, ProtocolCore& core, PayloadSink& sink);
  // Earliest arrival still in flight (Time::max(): none).
  Time next_arrival() const;
  bool idle() const;

  std::uint64_t dropped() const { return dropped_; }
  std::uint64_t duplicated() const { return duplicated_; }
  std::uint64_t corrupted() const { return corrupted_; }
  // Of those, frames whose flipped byte lies in the check field: the MAC, which covers
  // everything else, holds, and the receiver takes them without computing the check.
  std::uint64_t corrupted_check_field() const { return corrupted_check_field_; }
  std::uint64_t delayed() const { return delayed_; }

 private:
  class Output;
  struct InFlight {
    int from;
    std::vector<std::byte> bytes;
  };
  void submit(int from, int to, std::span<const std::byte> frame);
  void enqueue(int from, int to, std::vector<std::byte> bytes, Duration after);

  ManualClock& clock_;
  Duration latency_;
  Duration delay_;
  Duration per_frame_;
  std::vector<Time> busy_until_;  // per destination: when its link is free again
  FaultRule rule_;
  std::vector<std::unique_ptr<Output>> outputs_;
  // Per destination: frames by (arrival time, order of submission).
  std::vector<std::multimap<std::pair<Time, std::uint64_t>, InFlight>> queues_;
  std::map<std::tuple<int, int, int>, std::uint64_t> counts_;  // (from, to, type) -> frames
  std::uint64_t order_ = 0;
  std::uint64_t dropped_ = 0, duplicated_ = 0, corrupted_ = 0, corrupted_check_field_ = 0, delayed_ = 0;
};

}  // namespace bsp::recovery::testing
