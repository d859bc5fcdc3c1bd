// bsplib/mark_wait.h: the bounds of a wait in bsp_sync for a mark another process raises
// inside its own bsp_sync: a sender's staged mark as it stages each piece of a pulled
// transfer (Engine::copy_pulled), a reader's read mark once it has read this process's
// memory (Engine::await_readers). A wait that lasts says what it waits for, once, after
// --stall-warn; a mark that has not moved for --link-timeout stops the job. The peer
// raises the mark inside bsp_sync, never in the user's code, so a mark that long still
// is a peer stopped, stuck or dead, not one computing.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>

namespace bsp {

class MarkWait {
 public:
  using Clock = std::chrono::steady_clock;
  struct Limits {
    std::chrono::milliseconds warn_after;     // --stall-warn
    std::chrono::milliseconds give_up_after;  // --link-timeout
  };
  // waiter waits in bsp_sync of superstep for peer's mark_name ("staged mark", "read
  // mark"), which peer raises as it does `doing` ("stages those bytes") inside its
  // bsp_sync; the wait began (first found idle) at now.
  MarkWait(int waiter, int peer, long superstep, std::string_view mark_name, std::string_view doing, Limits limits,
           Clock::time_point now);
  // A wait that was reported says that it is over.
  ~MarkWait();
  MarkWait(const MarkWait&) = delete;
  MarkWait& operator=(const MarkWait&) = delete;

  // The mark moved (timed at the next look, so the busy path reads no clock).
  void moved() { moved_ = true; }
  // An idle look at now: prints the warning when due; returns the message to stop the
  // job with once the mark has been still for the give-up limit, else "".
  // what_is_awaited (called only for a message) details the mark needed and seen.
  std::string look(Clock::time_point now, const std::function<std::string()>& what_is_awaited);

 private:
  int waiter_, peer_;
  long superstep_;
  std::string mark_name_, doing_;
  Limits limits_;
  Clock::time_point started_, last_moved_;
  bool moved_ = false, warned_ = false;
};

}  // namespace bsp
