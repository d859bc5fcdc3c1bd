// bsplib/control/coordinator.h: the job's coordinator on the control plane. It runs in
// bsprun (or, when a program is started without bsprun, in a thread of pid 0), accepts
// one TCP connection per process, and:
//  - handshake: collects every process's transport address and requested process count,
//    then tells each the job's size and everyone's address (or that it is not needed);
//  - orderly shutdown: when all processes reached bsp_end, lets them all leave;
//  - unorderly shutdown: on bsp_abort, or a process that dies or exits before bsp_end,
//    prints one message (naming the pid), tells every process to stop, and after a
//    short grace period kills what is left;
//  - statistics: prints the per-process reports sent at bsp_end (bsprun --stats).
#pragma once

#include <sys/types.h>

#include <boost/asio.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "auth/mac.h"

namespace bsp::control {

// What a launcher learned of how far a process's start got (launch/start_report.h).
struct StartReport {
  bool began = false;      // it entered bsp_begin
  std::string exec_error;  // non-empty: it could not be started
};

struct CoordinatorConfig {
  int processes = 1;  // processes launched (pids 0 .. processes-1)
  std::uint32_t job_id = 0;
  auth::Key secret{};                // the job's secret: a session must prove it knows it
  std::string who = "bsprun";        // prefix of the coordinator's own messages
  bool print_stats = false;          // print the processes' statistics reports at the end
  double link_timeout_seconds = 30;  // two processes stalled waiting for each other this long: stop
  // Start-up: once a process has joined, the job stops naming the pids not joined when
  // this long passes without another join (0: 120 s + 0.5 s per process + 10 s per
  // other host: a loaded machine or a large job gets longer, and every join restarts it).
  double start_timeout_seconds = 0;
  std::vector<pid_t> os_pids;                // launched processes' OS pids (-1: not a child, skip)
  int listen_fd = -1;                        // an already listening socket to adopt (-1: open one)
  std::string listen_address = "127.0.0.1";  // where to open it
  // Processes on other hosts (started through a remote shell): index = pid, "" for a
  // process of this host. Their exits are reported by the launcher (process_exited), and
  // the coordinator's messages name the host.
  std::vector<std::string> hosts;
  // Called when the processes left must be killed (after an abort's grace period): the
  // launcher's way of reaching processes that are not this host's children.
  std::function<void()> kill_remote;
};

class Coordinator {
 public:
  Coordinator(boost::asio::io_context& io, CoordinatorConfig config);
  ~Coordinator();

  // The TCP port processes connect to (on config.listen_address).
  unsigned short port() const;

  // How the coordinator learns, once a process ended without saying hello, whether it
  // could not start or failed in bsp_begin's set-up (instead of being a plain program).
  void set_start_report(std::function<StartReport(int pid)> report);

  // Late registration of a launched process's OS pid (for reaping and killing).
  void set_os_pid(int pid, pid_t os_pid);

  // A process on another host ended (its launcher's report): wait_status as waitpid's.
  // `said`: how far its start got, as its launcher learned it (launch/start_report.h).
  void process_exited(int pid, pid_t os_pid, int wait_status, const StartReport& said = {});
  // Processes that can no longer be reached (their host or its remote shell is gone):
  // the job stops with `why`, and they count as ended.
  void processes_lost(const std::vector<int>& pids, const std::string& why);

  // True once the job is over (all finished, or aborted and every process gone).
  bool over() const;
  // The job's exit status: 0 when every process finished bsp_end and exited 0.
  int exit_status() const;

  // Runs io until the job is over. An exception from a handler is reported and the loop
  // goes on: nothing a process sends can stop the coordinator.
  static void run(boost::asio::io_context& io, const std::string& who);

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace bsp::control
