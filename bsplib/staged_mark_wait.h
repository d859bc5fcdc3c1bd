// bsplib/staged_mark_wait.h: the bounds of a receiver's wait for a sender's staged mark
// (Engine::copy_pulled copies a pulled transfer behind the mark the sender raises as it
// stages each piece during its bsp_sync). A wait that lasts says what it waits for, once,
// after --stall-warn: the pid, the superstep, the mark it needs and the mark it sees; a
// mark that has not moved for --link-timeout stops the job. The sender copies those
// pieces inside bsp_sync, never in the user's code, so a mark that long still is a
// sender stopped, stuck or dead, not one computing.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace bsp {

class StagedMarkWait {
 public:
  using Clock = std::chrono::steady_clock;
  struct Limits {
    std::chrono::milliseconds warn_after;     // --stall-warn
    std::chrono::milliseconds give_up_after;  // --link-timeout
  };
  // reader waits in bsp_sync of superstep for writer's staged mark to pass the size
  // bytes it staged at its staging offset at; the wait began (first found idle) at now.
  StagedMarkWait(int reader, int writer, long superstep, std::uint64_t at, std::uint32_t size, Limits limits,
                 Clock::time_point now);
  // A wait that was reported says that it is over.
  ~StagedMarkWait();
  StagedMarkWait(const StagedMarkWait&) = delete;
  StagedMarkWait& operator=(const StagedMarkWait&) = delete;

  // The mark moved: copying went on (timed at the next look, so the busy path reads no clock).
  void moved() { moved_ = true; }
  // An idle look at now, the writer's mark as last read, copied bytes done: prints the
  // warning when due; returns the message to stop the job with once the mark has been
  // still for the give-up limit, else "".
  std::string look(Clock::time_point now, std::uint64_t mark, std::uint32_t copied);

 private:
  std::string what_is_awaited(std::uint64_t mark, std::uint32_t copied) const;

  int reader_, writer_;
  long superstep_;
  std::uint64_t at_;
  std::uint32_t size_;
  Limits limits_;
  Clock::time_point started_, last_moved_;
  bool moved_ = false, warned_ = false;
};

}  // namespace bsp
