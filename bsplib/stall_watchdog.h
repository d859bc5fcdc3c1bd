// bsplib/stall_watchdog.h: the progress watchdog of bsp_sync. It notes, per peer, when
// something last moved on the link (a payload received from it or handed to the channel
// for it), and when a sync has waited longer than the warning interval it reports which
// peers the process waits for and how long each has been silent (then every second),
// and, once the sync is over, that the wait is over.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <vector>

namespace bsp {

// A process this one waits for, and how long since anything moved between them.
struct StallAwaited {
  int pid;
  double silent_seconds;
};

class StallWatchdog {
 public:
  using Clock = std::chrono::steady_clock;
  // Told that this process has waited waited_seconds in bsp_sync of superstep for the
  // processes in awaited (empty: the wait is over).
  using Reporter = std::function<void(long superstep, double waited_seconds, const std::vector<StallAwaited>& awaited)>;

  StallWatchdog(int nprocs, std::chrono::milliseconds warn_after, Reporter reporter);

  // A wait longer than this is reported (from the next superstep on).
  void set_warn_after(std::chrono::milliseconds after) { warn_after_ = after; }
  std::chrono::milliseconds warn_after() const { return warn_after_; }

  // Something moved on the link to pid. On the busy path: only noted here; the time is
  // taken in waiting(), for the peers noted since, so a busy superstep reads no clock.
  void moved(int pid) {
    PeerProgress& peer = progress_[static_cast<std::size_t>(pid)];
    if (!peer.moved) {
      peer.moved = true;
      moved_.push_back(pid);
    }
  }
  // A sync begins to wait at now (the engine tells it at the sync's first idle moment).
  void superstep_started(Clock::time_point now) {
    started_ = now;
    next_report_ = now + warn_after_;
  }
  // The sync of superstep is idle at now, waiting for the peers in awaited: times the
  // links that moved since the last call, and reports when a report is due.
  void waiting(Clock::time_point now, long superstep, const std::vector<int>& awaited);
  // The sync of superstep is over: if a wait in it was reported, reports its end.
  void superstep_ended(long superstep);

 private:
  struct PeerProgress {
    Clock::time_point last_moved;
    bool moved = false;
  };
  std::vector<PeerProgress> progress_;  // by pid
  std::vector<int> moved_;              // the pids noted by moved() since the last waiting()
  std::chrono::milliseconds warn_after_;
  Reporter reporter_;
  Clock::time_point started_, next_report_;
  bool reported_ = false;
};

}  // namespace bsp
