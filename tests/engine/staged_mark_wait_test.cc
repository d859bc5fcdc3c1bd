// tests/engine/staged_mark_wait_test.cc: the bounds of a wait for a peer's staged mark on
// their own, driven by explicit time points (no clock, no sleeps): silent until the
// warning interval, then one line naming the pid, superstep and marks; a stop once the
// mark has been still for the give-up limit, counted from its last move; the end said.
#include "bsplib/staged_mark_wait.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

namespace bsp {
namespace {

using namespace std::chrono_literals;
using Clock = StagedMarkWait::Clock;

// (superstep << 32) | staging offset written through.
constexpr std::uint64_t mark_of(std::uint64_t superstep, std::uint64_t offset) { return superstep << 32 | offset; }

TEST(StagedMarkWaitTest, WarnsOnceThenStopsWhenTheMarkStaysStill) {
  const Clock::time_point t0 = Clock::now();
  // pid 1 waits in superstep 3 for pid 0's 1 MiB at staging offset 4096.
  std::optional<StagedMarkWait> wait;
  wait.emplace(1, 0, 3, 4096, 1u << 20, StagedMarkWait::Limits{1s, 3s}, t0);
  const std::uint64_t half = mark_of(3, 4096 + (512u << 10));
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(wait->look(t0 + 500ms, half, 512u << 10), "");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");  // not yet
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(wait->look(t0 + 1100ms, half, 512u << 10), "");
  EXPECT_EQ(wait->look(t0 + 1200ms, half, 512u << 10), "");
  const std::string warned = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(warned.find("pid 1 has waited 1.1 s in bsp_sync (superstep 3) for pid 0's staged mark"), std::string::npos)
      << warned;
  EXPECT_NE(warned.find("needs (3, 1052672), the mark says (3, 528384), 524288 of the bytes copied"), std::string::npos)
      << warned;
  EXPECT_EQ(warned.find("has waited", warned.find("has waited") + 1), std::string::npos) << "once: " << warned;
  // The mark moves at 2.9 s: the silence starts again there.
  wait->moved();
  EXPECT_EQ(wait->look(t0 + 2900ms, mark_of(3, 4096 + (768u << 10)), 768u << 10), "");
  EXPECT_EQ(wait->look(t0 + 5800ms, mark_of(3, 4096 + (768u << 10)), 768u << 10), "");
  const std::string stop = wait->look(t0 + 5900ms, mark_of(3, 4096 + (768u << 10)), 768u << 10);
  EXPECT_NE(stop.find("pid 1 waited 5.9 s in bsp_sync (superstep 3) for pid 0's staged mark"), std::string::npos)
      << stop;
  EXPECT_NE(stop.find("the mark has not moved for 3.0 s"), std::string::npos) << stop;
  EXPECT_NE(stop.find("stopping the job (--link-timeout=3)"), std::string::npos) << stop;
  // A reported wait says when it is over.
  ::testing::internal::CaptureStderr();
  wait.reset();
  const std::string over = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(over.find("pid 1 waited"), std::string::npos) << over;
  EXPECT_NE(over.find("for pid 0's staged mark; it is over"), std::string::npos) << over;
}

TEST(StagedMarkWaitTest, AShortWaitSaysNothing) {
  const Clock::time_point t0 = Clock::now();
  ::testing::internal::CaptureStderr();
  {
    StagedMarkWait wait(0, 2, 7, 0, 1u << 20, StagedMarkWait::Limits{10s, 30s}, t0);
    EXPECT_EQ(wait.look(t0 + 1ms, mark_of(6, 100), 0), "");  // still the last superstep's mark
    wait.moved();
    EXPECT_EQ(wait.look(t0 + 9s, mark_of(7, 1u << 19), 1u << 19), "");
  }
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

}  // namespace
}  // namespace bsp
