// bsplib/mark_wait.cc: saying and bounding a wait for a peer's mark (mark_wait.h).
#include "bsplib/mark_wait.h"

#include <fmt/format.h>

#include <cstdio>

namespace bsp {

namespace {
double seconds_between(MarkWait::Clock::time_point from, MarkWait::Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}
}  // namespace

MarkWait::MarkWait(int waiter, int peer, long superstep, std::string_view mark_name, std::string_view doing,
                   Limits limits, Clock::time_point now)
    : waiter_(waiter),
      peer_(peer),
      superstep_(superstep),
      mark_name_(mark_name),
      doing_(doing),
      limits_(limits),
      started_(now),
      last_moved_(now) {}

MarkWait::~MarkWait() {
  if (!warned_) return;
  fmt::print(stderr, "bsplib: pid {} waited {:.1f} s in bsp_sync (superstep {}) for pid {}'s {}; it is over\n", waiter_,
             seconds_between(started_, Clock::now()), superstep_, peer_, mark_name_);
  std::fflush(stderr);
}

std::string MarkWait::look(Clock::time_point now, const std::function<std::string()>& what_is_awaited) {
  if (moved_) {
    moved_ = false;
    last_moved_ = now;
  }
  const double silent = seconds_between(last_moved_, now);
  if (now - last_moved_ >= limits_.give_up_after) {
    return fmt::format(
        "bsplib: pid {} waited {:.1f} s in bsp_sync (superstep {}) for pid {}'s {}: {}; the mark has not moved for "
        "{:.1f} s (pid {} {} inside its bsp_sync: stopped, stuck or dead); stopping the job (--link-timeout={})",
        waiter_, seconds_between(started_, now), superstep_, peer_, mark_name_, what_is_awaited(), silent, peer_,
        doing_, std::chrono::duration<double>(limits_.give_up_after).count());
  }
  if (!warned_ && now - started_ >= limits_.warn_after) {
    warned_ = true;
    fmt::print(
        stderr,
        "bsplib: pid {} has waited {:.1f} s in bsp_sync (superstep {}) for pid {}'s {}: {}; unchanged for {:.1f} s\n",
        waiter_, seconds_between(started_, now), superstep_, peer_, mark_name_, what_is_awaited(), silent);
    std::fflush(stderr);
  }
  return {};
}

}  // namespace bsp
