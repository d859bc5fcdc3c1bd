// bsplib/sync_clock.cc: the choice of counter and the conversion of stamps (sync_clock.h).
#include "bsplib/sync_clock.h"

#include <cstdint>
#include <fstream>
#include <string>

namespace bsp {
namespace {

SyncClock::Source kernel_source() {
#if defined(__x86_64__) || defined(__i386__)
  std::ifstream file("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  std::string name;
  if (file >> name && name == "tsc") return SyncClock::Source::time_stamp_counter;
#endif
  return SyncClock::Source::steady_clock;
}

}  // namespace

SyncClock::SyncClock() : SyncClock(kernel_source()) {}

SyncClock::SyncClock(Source source) : source_(source), base_(read_pair()) {}

SyncClock::Pair SyncClock::read_pair() const {
  Pair best{};
  std::uint64_t best_gap = UINT64_MAX;
  for (int attempt = 0; attempt < 4; ++attempt) {
    const std::uint64_t before = now();
    const Clock::time_point time = Clock::now();
    const std::uint64_t after = now();
    if (after >= before && after - before < best_gap) {
      best_gap = after - before;
      best = {before + (after - before) / 2, time};
    }
  }
  if (best_gap == UINT64_MAX) best = {now(), Clock::now()};  // the counter went back: no better pair
  return best;
}

double SyncClock::seconds(std::uint64_t ticks) const {
  if (source_ == Source::steady_clock) return static_cast<double>(ticks) * 1e-9;
  const Pair current = read_pair();
  if (current.stamp <= base_.stamp) return 0;
  const double elapsed_seconds = std::chrono::duration<double>(current.time - base_.time).count();
  return static_cast<double>(ticks) * (elapsed_seconds / static_cast<double>(current.stamp - base_.stamp));
}

}  // namespace bsp
