// transport/fault/fault_transport.h: the `fault` decorator: wraps any datagram transport
// and, on the sending side, drops, duplicates, reorders and corrupts frames at given
// rates, from a generator seeded by the spec's seed and the pid, so a run is repeatable.
// Spec: "drop=0.05,dup=0.01,reorder=0.02,corrupt=0.001,seed=7" (every key optional).
// Reorder holds a frame back and sends it after the next one; flush() sends a frame still
// held. The wrapped transport reports itself unreliable.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "transport/transport.h"

namespace bsp::transport {

struct FaultSpec {
  double drop = 0;     // probability a frame is not sent
  double dup = 0;      // probability it is sent twice
  double reorder = 0;  // probability it is held back and sent after the next frame
  double corrupt = 0;  // probability one bit of it is flipped
  std::uint64_t seed = 1;
};

// Throws std::runtime_error naming the problem (unknown key, bad number, rate outside 0..1).
FaultSpec parse_fault_spec(std::string_view spec);

// What the decorator did, for tests and reports.
struct FaultCounts {
  std::uint64_t frames = 0;  // frames handed to send()
  std::uint64_t dropped = 0;
  std::uint64_t duplicated = 0;
  std::uint64_t reordered = 0;
  std::uint64_t corrupted = 0;
};

// Wraps inner; throws std::runtime_error on a bad spec.
std::unique_ptr<Transport> wrap_with_faults(std::unique_ptr<Transport> inner, std::string_view spec, int pid);

// The counts of the fault decorator in transport's chain of decorators (nullptr if none).
const FaultCounts* fault_counts(const Transport& transport);

}  // namespace bsp::transport
