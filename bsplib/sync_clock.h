// bsplib/sync_clock.h: the stamps that time every bsp_sync. A superstep of 0.1-0.2 µs
// cannot afford two steady_clock reads (each ~20 ns back to back here, and ordered, so
// they also stall the work around them); where the kernel itself keeps time by the CPU's
// time-stamp counter, a stamp is one unordered `rdtsc` instead. Stamps are turned into
// seconds only when asked for, by the ratio of steady_clock to counter ticks over the whole
// time since the clock was made, so no calibration runs at start and the error shrinks
// as the job runs. Elsewhere a stamp is steady_clock's nanoseconds.
#pragma once

#include <chrono>
#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace bsp {

class SyncClock {
 public:
  using Clock = std::chrono::steady_clock;
  enum class Source { time_stamp_counter, steady_clock };

  // The counter where the kernel's clocksource is `tsc` (it then keeps the counters of
  // all CPUs in step and running at one rate), else steady_clock.
  SyncClock();
  explicit SyncClock(Source source);

  std::uint64_t now() const {
#if defined(__x86_64__) || defined(__i386__)
    if (source_ == Source::time_stamp_counter) return __rdtsc();
#endif
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count());
  }

  // The seconds that `ticks` (a difference of stamps) stand for.
  double seconds(std::uint64_t ticks) const;
  Source source() const { return source_; }

 private:
  // A stamp and the steady_clock time read with it: of a few tries, the one whose two
  // stamps around the time read lie closest (a try the scheduler cut in two loses).
  struct Pair {
    std::uint64_t stamp;
    Clock::time_point time;
  };
  Pair read_pair() const;

  Source source_;
  Pair base_;
};

}  // namespace bsp
