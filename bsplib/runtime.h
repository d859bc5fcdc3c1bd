// bsplib/runtime.h: a BSPlib process's life: how it was started (by bsprun, or directly,
// in which case bsp_begin starts the other processes itself and pid 0 hosts the job's
// coordinator in a thread), the set-up of the control plane, transport and channel, the
// orderly end (bsp_end) and the unorderly one (bsp_abort, a dead peer).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "bsplib/engine.h"
#include "bsplib/options.h"
#include "recovery/spin_policy.h"

namespace bsp {

namespace control {
class ControlClient;
}
namespace profile {
class Recorder;
}

class Runtime final : public JobControl {
 public:
  static Runtime& instance();

  void init(void (*spmd)(), int argc, char** argv);
  void begin(int maxprocs);
  void end();

  // The engine between bsp_begin and bsp_end; calls outside them are an error.
  Engine& engine(const char* call);
  bool running() const { return engine_ != nullptr; }

  int nprocs_available() const;
  double seconds_since_begin() const;
  const RunOptions& options() const { return options_; }
  std::string transport_name() const { return options_.transport; }

  [[noreturn]] void abort_job(const std::string& message) override;
  void check_for_abort() override;
  void report_stall(long superstep, double waited_seconds, const std::vector<Awaited>& awaited) override;

 private:
  Runtime() = default;
  // Starts processes 1..processes-1 by fork; returns this process's pid.
  int start_local_processes(int processes, std::uint32_t job_id, const auth::Key& secret, unsigned short& port);
  void start_coordinator(int processes, std::uint32_t job_id, const auth::Key& secret, int listen_fd,
                         const std::vector<pid_t>& os_pids);
  [[noreturn]] void leave(int status);
  // Leaves quietly (status 1) if the coordinator says within `longest` that the job
  // stops (its message is the one printed); else returns.
  void await_verdict(std::chrono::milliseconds longest);
  void choose_data_address();
  std::string statistics_report() const;

  RunOptions options_;
  std::unique_ptr<control::ControlClient> control_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<profile::Recorder> profile_;  // --profile
  std::string pinning_ = "off";                 // what pin_to_core did (--stats)
  int spin_us_ = 0;                             // how long a wait spins before blocking (--stats)
  recovery::SpinExtension spin_extension_;      // and on, while only the job runs here (--stats)
  int slice_us_ = 0;                            // the scheduler slice in effect (--stats)
  std::string path_report_;                     // hybrid transports: which path each peer takes (--stats)
  std::chrono::steady_clock::time_point started_;
  bool begun_ = false;
  bool launched_ = false;           // started by bsprun
  std::thread coordinator_thread_;  // pid 0 of a job started without bsprun (or by PMIx)
};

}  // namespace bsp
