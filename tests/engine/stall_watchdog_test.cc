// tests/engine/stall_watchdog_test.cc: the bsp_sync progress watchdog on its own, driven
// by explicit time points (no clock, no sleeps): when it reports, what, and the end.
#include "bsplib/stall_watchdog.h"

#include <gtest/gtest.h>

#include <vector>

namespace bsp {
namespace {

using namespace std::chrono_literals;
using Clock = StallWatchdog::Clock;

struct Report {
  long superstep;
  double waited_seconds;
  std::vector<StallAwaited> awaited;
};

class StallWatchdogTest : public ::testing::Test {
 protected:
  StallWatchdog watchdog_{4, 10s, [this](long superstep, double waited, const std::vector<StallAwaited>& awaited) {
                            reports_.push_back({superstep, waited, awaited});
                          }};
  std::vector<Report> reports_;
  Clock::time_point t0_ = Clock::now();
};

TEST_F(StallWatchdogTest, QuietUntilTheIntervalThenEverySecondThenTheEnd) {
  watchdog_.superstep_started(t0_);
  watchdog_.waiting(t0_ + 9999ms, 3, {1, 2});
  EXPECT_TRUE(reports_.empty());
  watchdog_.waiting(t0_ + 10s, 3, {1, 2});
  ASSERT_EQ(reports_.size(), 1u);
  EXPECT_EQ(reports_[0].superstep, 3);
  EXPECT_DOUBLE_EQ(reports_[0].waited_seconds, 10.0);
  ASSERT_EQ(reports_[0].awaited.size(), 2u);
  EXPECT_EQ(reports_[0].awaited[0].pid, 1);
  EXPECT_EQ(reports_[0].awaited[1].pid, 2);
  watchdog_.waiting(t0_ + 10500ms, 3, {1, 2});  // the next one a second later
  EXPECT_EQ(reports_.size(), 1u);
  watchdog_.waiting(t0_ + 11s, 3, {2});
  ASSERT_EQ(reports_.size(), 2u);
  EXPECT_DOUBLE_EQ(reports_[1].waited_seconds, 11.0);
  ASSERT_EQ(reports_[1].awaited.size(), 1u);
  watchdog_.superstep_ended(3);  // a reported wait is declared over, once
  ASSERT_EQ(reports_.size(), 3u);
  EXPECT_EQ(reports_[2].superstep, 3);
  EXPECT_EQ(reports_[2].waited_seconds, 0.0);
  EXPECT_TRUE(reports_[2].awaited.empty());
  watchdog_.superstep_ended(3);
  EXPECT_EQ(reports_.size(), 3u);
}

TEST_F(StallWatchdogTest, ASyncWithoutAReportEndsSilently) {
  watchdog_.superstep_started(t0_);
  watchdog_.waiting(t0_ + 1s, 0, {1});
  watchdog_.superstep_ended(0);
  EXPECT_TRUE(reports_.empty());
}

TEST_F(StallWatchdogTest, SilenceIsTimedFromTheLastLookThatFoundTheLinkMoved) {
  // Built at about t0_: every link counts as moved then.
  watchdog_.superstep_started(t0_);
  watchdog_.moved(2);
  watchdog_.waiting(t0_ + 4s, 0, {1, 2});  // pid 2's payload is timed at this look
  watchdog_.moved(2);                      // noted twice, timed once
  watchdog_.moved(2);
  watchdog_.waiting(t0_ + 6s, 0, {1, 2});
  watchdog_.waiting(t0_ + 10s, 0, {1, 2});
  ASSERT_EQ(reports_.size(), 1u);
  ASSERT_EQ(reports_[0].awaited.size(), 2u);
  EXPECT_GE(reports_[0].awaited[0].silent_seconds, 10.0);
  EXPECT_LT(reports_[0].awaited[0].silent_seconds, 11.0);
  EXPECT_DOUBLE_EQ(reports_[0].awaited[1].silent_seconds, 4.0);
}

TEST_F(StallWatchdogTest, ANewIntervalAppliesFromTheNextSuperstep) {
  watchdog_.set_warn_after(500ms);
  watchdog_.superstep_started(t0_);
  watchdog_.waiting(t0_ + 499ms, 7, {0});
  EXPECT_TRUE(reports_.empty());
  watchdog_.waiting(t0_ + 500ms, 7, {0});
  EXPECT_EQ(reports_.size(), 1u);
}

}  // namespace
}  // namespace bsp
