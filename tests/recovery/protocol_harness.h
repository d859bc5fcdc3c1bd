// tests/recovery/protocol_harness.h: runs n ProtocolCores over the in-memory network with
// a manual clock until every planned payload is delivered and acknowledged, advancing the
// clock straight to the next arrival or timer (no sleeps), and checks delivery: each
// payload exactly once, in send order, bit-identical.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "recovery/stats.h"
#include "tests/recovery/memory_network.h"

namespace bsp::recovery::testing {

struct Traffic {
  int nprocs = 2;
  std::size_t frames = 200;  // payloads per planned link
  bool all_to_all = false;   // false: only 0 -> 1
  std::size_t buffers = 0;   // pool size (0: default)
  std::string policy = "buffer";
  Duration latency = std::chrono::microseconds(20);
  Duration delay = std::chrono::microseconds(150);    // extra for Fate::delay (reorder)
  Duration per_frame = std::chrono::microseconds(3);  // each receiver's link rate
};

struct Outcome {
  bool finished = false;            // everything delivered and acknowledged, network idle
  bool delivered_exactly = true;    // every payload once, in order, identical
  std::string mismatch;             // the first delivery problem
  Duration elapsed{};               // manual-clock time the run took
  std::vector<ChannelStats> stats;  // per process
  ChannelStats total;
  std::uint64_t dropped = 0, duplicated = 0, corrupted = 0, corrupted_check_field = 0, delayed = 0;
  std::string stuck;  // when not finished: what each process still waits for
};

// One line of counters, for failure messages.
std::string describe(const ChannelStats& stats);

Outcome run_protocol(const Traffic& traffic, FaultRule rule);

// The deterministic payload number i on link src -> dst (1..max bytes).
std::vector<std::byte> test_payload(int src, int dst, std::size_t i, std::size_t max);

}  // namespace bsp::recovery::testing
