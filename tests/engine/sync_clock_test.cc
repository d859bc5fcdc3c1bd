// tests/engine/sync_clock_test.cc: the stamps that time each bsp_sync, held against
// steady_clock read right around them: seconds() of a stamp difference must fall between
// the steady time inside the two stamps and the steady time outside them (plus a small
// slack for the ratio), from either source. A counter tick taken for a nanosecond (a 2-4 GHz
// counter) is off by 2-4x.
#include "bsplib/sync_clock.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

namespace bsp {
namespace {

using Clock = SyncClock::Clock;
using namespace std::chrono_literals;

double seconds_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

// Busy for at least `how_long` of steady time (no sleep: the counter must run, as in a sync).
void busy_for(std::chrono::microseconds how_long) {
  const Clock::time_point until = Clock::now() + how_long;
  while (Clock::now() < until) {
  }
}

void expect_seconds_between_the_brackets(const SyncClock& clock, std::chrono::microseconds span) {
  const Clock::time_point outer_start = Clock::now();
  const std::uint64_t first = clock.now();
  const Clock::time_point inner_start = Clock::now();
  busy_for(span);
  const Clock::time_point inner_end = Clock::now();
  const std::uint64_t second = clock.now();
  const Clock::time_point outer_end = Clock::now();
  ASSERT_GT(second, first);
  const double measured = clock.seconds(second - first);
  const double slack = 0.01 * seconds_between(outer_start, outer_end) + 20e-6;
  EXPECT_GE(measured, seconds_between(inner_start, inner_end) - slack);
  EXPECT_LE(measured, seconds_between(outer_start, outer_end) + slack);
}

TEST(SyncClock, TheCounterMeasuresWhatSteadyClockMeasures) {
  SyncClock clock(SyncClock::Source::time_stamp_counter);
#if !defined(__x86_64__) && !defined(__i386__)
  GTEST_SKIP() << "no time-stamp counter on this architecture";
#endif
  busy_for(2ms);  // a base some way back, as a job's first sync has
  expect_seconds_between_the_brackets(clock, 5ms);
  expect_seconds_between_the_brackets(clock, 30ms);
}

TEST(SyncClock, SteadyClockStampsAreNanoseconds) {
  SyncClock clock(SyncClock::Source::steady_clock);
  expect_seconds_between_the_brackets(clock, 5ms);
  EXPECT_DOUBLE_EQ(clock.seconds(1'500'000'000), 1.5);
}

TEST(SyncClock, TheCounterIsChosenWhereTheKernelKeepsTimeByIt) {
  std::ifstream file("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  std::string name;
  if (!(file >> name)) GTEST_SKIP() << "no clocksource in /sys on this machine";
#if defined(__x86_64__) || defined(__i386__)
  const bool counter = name == "tsc";
#else
  const bool counter = false;
#endif
  EXPECT_EQ(SyncClock().source() == SyncClock::Source::time_stamp_counter, counter) << "clocksource " << name;
}

}  // namespace
}  // namespace bsp
