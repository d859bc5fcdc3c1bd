// recovery/runnable_census.h: whether the tasks runnable on this machine right now are
// all the job's own processes here. A waiting process that spins hands its core to
// whatever the scheduler runs next: only the job's processes gains (the core would
// otherwise go idle while a peer's share of a long superstep finishes), anyone else's
// task loses its turns and delays the job's wake-ups (spin_policy.h, docs/tuning.md).
// Read from /proc: the machine's runnable count (/proc/loadavg's fourth field) against
// the job's processes in state R (/proc/PID/stat), each named by its OS pid and start time
// so that a pid from another pid namespace, or one reused after its process ended, never
// counts.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "transport/file_descriptor.h"

namespace bsp::recovery {

// One process as it reported itself: getpid() and its start time, in clock ticks since
// boot (/proc/PID/stat field 22: the same in every pid namespace of one machine).
struct ProcessIdentity {
  pid_t pid = -1;
  std::uint64_t start_ticks = 0;
};

// This process's identity (start_ticks 0 if /proc is unreadable).
ProcessIdentity own_identity();

// /proc/PID/stat's text: its state letter and start time (the command name, in
// parentheses, may hold spaces and parentheses: fields are counted from the last ')').
// False if the text is not such a line.
bool parse_process_stat(std::string_view text, char& state, std::uint64_t& start_ticks);

// /proc/loadavg's text: its runnable tasks ("running/total", the fourth field), or -1.
int runnable_tasks_in(std::string_view loadavg);

class RunnableCensus {
 public:
  // Opens /proc/PID/stat of each process (this one among them) and keeps it open; a
  // process that is not there with the start time it reported makes the census empty.
  explicit RunnableCensus(std::span<const ProcessIdentity> job_here);

  // Every process was found (else only_the_job_runs() is always false).
  bool complete() const { return complete_; }
  // The job's processes that are runnable now (state R), or -1 if one cannot be read.
  int job_runnable() const;
  // No task runnable on the machine now but the job's: one read of /proc/loadavg and one
  // of each process's stat (a few microseconds each).
  bool only_the_job_runs() const;
  // How many times only_the_job_runs() was asked, and said yes (--stats).
  long checks() const { return checks_; }
  long said_yes() const { return said_yes_; }

 private:
  transport::FileDescriptor loadavg_;
  std::vector<transport::FileDescriptor> stats_;  // the job's processes here, each's /proc/PID/stat
  bool complete_ = false;
  mutable long checks_ = 0;  // the census is asked from the one thread that waits
  mutable long said_yes_ = 0;
};

}  // namespace bsp::recovery
