// bsplib/launch/start_report.h: how a launched process tells its launcher how far its
// start got, so a job that never formed says why: a pipe per process whose write end the
// process inherits (its number in BSP_START_FD). The launcher's child writes 'E' and the
// error when exec fails; the BSPlib runtime writes 'B' as bsp_begin starts and closes its
// end. A process that exits with neither said nothing: a program that is not a BSPlib
// program (its exit status is the job's). Read after the process ended, never before.
#pragma once

#include <string>

namespace bsp::launch {

inline constexpr const char* kStartFdVariable = "BSP_START_FD";

// What a process said through its start pipe.
struct StartReport {
  bool began = false;      // it entered bsp_begin
  std::string exec_error;  // non-empty: it could not be started (exec failed)
};

// A pipe for one child: both ends close-on-exec; the child keeps its write end with
// inherit_start_pipe. Throws std::system_error when no pipe can be made.
struct StartPipe {
  int read_fd = -1;
  int write_fd = -1;
};
StartPipe make_start_pipe();

// In the child, before exec: the write end survives exec and BSP_START_FD names it.
void inherit_start_pipe(int write_fd);

// In the child, after exec failed: tells the launcher why (async-signal-safe).
void report_exec_failure(int write_fd, const char* what);

// In the launcher, once the child has ended: what it said; closes read_fd.
StartReport read_start_report(int read_fd);

// In a launched process, as bsp_begin starts: says so (if BSP_START_FD is set), closes the
// descriptor and clears the variable, so nothing the program starts later inherits it.
void announce_begin();

}  // namespace bsp::launch
