// tests/engine/mark_wait_test.cc: the bounds of a wait for a peer's mark on their own,
// driven by explicit time points (no clock, no sleeps): silent until the warning
// interval, then one line naming the pid, superstep, mark and what it details; a stop
// once the mark has been still for the give-up limit, counted from its last move; the
// end said.
#include "bsplib/mark_wait.h"

#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <string>

namespace bsp {
namespace {

using namespace std::chrono_literals;
using Clock = MarkWait::Clock;

// What the engine details of a staged mark (a stand-in that shows the mark passed through).
std::function<std::string()> detail(std::uint64_t mark) {
  return [mark] { return "the mark says " + std::to_string(mark); };
}

TEST(MarkWaitTest, WarnsOnceThenStopsWhenTheMarkStaysStill) {
  const Clock::time_point t0 = Clock::now();
  // pid 1 waits in superstep 3 for pid 0's 1 MiB at staging offset 4096.
  std::optional<MarkWait> wait;
  wait.emplace(1, 0, 3, "staged mark", "stages those bytes", MarkWait::Limits{1s, 3s}, t0);
  const std::uint64_t half = 4096 + (512u << 10);
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(wait->look(t0 + 500ms, detail(half)), "");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");  // not yet
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(wait->look(t0 + 1100ms, detail(half)), "");
  EXPECT_EQ(wait->look(t0 + 1200ms, detail(half)), "");
  const std::string warned = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(warned.find("pid 1 has waited 1.1 s in bsp_sync (superstep 3) for pid 0's staged mark"), std::string::npos)
      << warned;
  EXPECT_NE(warned.find("staged mark: the mark says 528384; unchanged for 1.1 s"), std::string::npos) << warned;
  EXPECT_EQ(warned.find("has waited", warned.find("has waited") + 1), std::string::npos) << "once: " << warned;
  // The mark moves at 2.9 s: the silence starts again there.
  wait->moved();
  EXPECT_EQ(wait->look(t0 + 2900ms, detail(4096 + (768u << 10))), "");
  EXPECT_EQ(wait->look(t0 + 5800ms, detail(4096 + (768u << 10))), "");
  const std::string stop = wait->look(t0 + 5900ms, detail(4096 + (768u << 10)));
  EXPECT_NE(stop.find("pid 1 waited 5.9 s in bsp_sync (superstep 3) for pid 0's staged mark"), std::string::npos)
      << stop;
  EXPECT_NE(stop.find("the mark has not moved for 3.0 s (pid 0 stages those bytes inside its bsp_sync"),
            std::string::npos)
      << stop;
  EXPECT_NE(stop.find("stopping the job (--link-timeout=3)"), std::string::npos) << stop;
  // A reported wait says when it is over.
  ::testing::internal::CaptureStderr();
  wait.reset();
  const std::string over = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(over.find("pid 1 waited"), std::string::npos) << over;
  EXPECT_NE(over.find("for pid 0's staged mark; it is over"), std::string::npos) << over;
}

TEST(MarkWaitTest, AShortWaitSaysNothing) {
  const Clock::time_point t0 = Clock::now();
  ::testing::internal::CaptureStderr();
  {
    MarkWait wait(0, 2, 7, "read mark", "reads this memory", MarkWait::Limits{10s, 30s}, t0);
    EXPECT_EQ(wait.look(t0 + 1ms, detail(13)), "");  // still the last superstep's mark
    wait.moved();
    EXPECT_EQ(wait.look(t0 + 9s, detail(15)), "");
  }
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

}  // namespace
}  // namespace bsp
