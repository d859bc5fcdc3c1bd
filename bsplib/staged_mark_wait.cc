// bsplib/staged_mark_wait.cc: saying and bounding a wait for a staged mark (staged_mark_wait.h).
#include "bsplib/staged_mark_wait.h"

#include <fmt/format.h>

#include <cstdio>

namespace bsp {

namespace {
double seconds_between(StagedMarkWait::Clock::time_point from, StagedMarkWait::Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}
// A staged mark as (superstep, staging offset written through).
std::string mark_text(std::uint64_t mark) { return fmt::format("({}, {})", mark >> 32, mark & 0xffffffffu); }
}  // namespace

StagedMarkWait::StagedMarkWait(int reader, int writer, long superstep, std::uint64_t at, std::uint32_t size,
                               Limits limits, Clock::time_point now)
    : reader_(reader),
      writer_(writer),
      superstep_(superstep),
      at_(at),
      size_(size),
      limits_(limits),
      started_(now),
      last_moved_(now) {}

StagedMarkWait::~StagedMarkWait() {
  if (!warned_) return;
  fmt::print(stderr, "bsplib: pid {} waited {:.1f} s in bsp_sync (superstep {}) for pid {}'s staged mark; it is over\n",
             reader_, seconds_between(started_, Clock::now()), superstep_, writer_);
  std::fflush(stderr);
}

std::string StagedMarkWait::what_is_awaited(std::uint64_t mark, std::uint32_t copied) const {
  const std::uint64_t needed = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(superstep_)) << 32) |
                               (at_ + size_);
  return fmt::format(
      "pid {}'s staged mark (superstep, staging offset): a pulled transfer of {} bytes at its staging offset {} "
      "needs {}, the mark says {}, {} of the bytes copied",
      writer_, size_, at_, mark_text(needed), mark_text(mark), copied);
}

std::string StagedMarkWait::look(Clock::time_point now, std::uint64_t mark, std::uint32_t copied) {
  if (moved_) {
    moved_ = false;
    last_moved_ = now;
  }
  const double silent = seconds_between(last_moved_, now);
  if (now - last_moved_ >= limits_.give_up_after) {
    return fmt::format(
        "bsplib: pid {} waited {:.1f} s in bsp_sync (superstep {}) for {}; the mark has not moved for {:.1f} s "
        "(pid {} stages those bytes inside its bsp_sync: stopped, stuck or dead); stopping the job "
        "(--link-timeout={})",
        reader_, seconds_between(started_, now), superstep_, what_is_awaited(mark, copied), silent, writer_,
        std::chrono::duration<double>(limits_.give_up_after).count());
  }
  if (!warned_ && now - started_ >= limits_.warn_after) {
    warned_ = true;
    fmt::print(stderr, "bsplib: pid {} has waited {:.1f} s in bsp_sync (superstep {}) for {}; unchanged for {:.1f} s\n",
               reader_, seconds_between(started_, now), superstep_, what_is_awaited(mark, copied), silent);
    std::fflush(stderr);
  }
  return {};
}

}  // namespace bsp
