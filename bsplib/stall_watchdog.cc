// bsplib/stall_watchdog.cc: the progress watchdog of bsp_sync (stall_watchdog.h).
#include "bsplib/stall_watchdog.h"

#include <utility>

namespace bsp {

using namespace std::chrono_literals;

StallWatchdog::StallWatchdog(int nprocs, std::chrono::milliseconds warn_after, Reporter reporter)
    : progress_(static_cast<std::size_t>(nprocs), PeerProgress{Clock::now()}),
      warn_after_(warn_after),
      reporter_(std::move(reporter)) {}

void StallWatchdog::waiting(Clock::time_point now, long superstep, const std::vector<int>& awaited) {
  // Idle: note when the links that moved since the last look did (noted on the busy
  // path, timed only here, at least every wait slice).
  for (int pid : moved_) {
    PeerProgress& peer = progress_[static_cast<std::size_t>(pid)];
    peer.moved = false;
    peer.last_moved = now;
  }
  moved_.clear();
  if (now >= next_report_) {
    std::vector<StallAwaited> silent;
    for (int peer : awaited) {
      silent.push_back(
          {peer, std::chrono::duration<double>(now - progress_[static_cast<std::size_t>(peer)].last_moved).count()});
    }
    reporter_(superstep, std::chrono::duration<double>(now - started_).count(), silent);
    reported_ = true;
    next_report_ = now + 1s;
  }
}

void StallWatchdog::superstep_ended(long superstep) {
  if (reported_) {
    reporter_(superstep, 0, {});
    reported_ = false;
  }
}

}  // namespace bsp
