// bsplib/control/control_client.h: a process's end of the control plane: the handshake
// with the coordinator, abort in both directions, and the orderly goodbye at bsp_end.
// Blocking calls with timeouts; poll_abort() is a cheap non-blocking check the engine
// makes while it waits, so an abort or a dead peer stops this process promptly.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio.hpp>

#include "auth/mac.h"

namespace bsp::control {

struct JobStart {
  bool excess = false;  // this process is not needed (pid >= job size)
  int nprocs = 0;
  std::uint32_t job_id = 0;
  std::vector<std::string> addresses;         // index = pid
  std::vector<std::string> machines;          // index = pid: each process's machine (boot id; "" unknown)
  std::vector<std::int32_t> os_pids;          // index = pid: its getpid() on that machine
  std::vector<std::uint64_t> os_start_ticks;  // index = pid: its start, clock ticks since boot (0 unknown)
};

// The job is being stopped: thrown by the blocking calls, returned by poll_abort().
struct JobAborted {
  std::string message;
  bool printed = true;  // false: the coordinator is gone, nobody printed a message yet
};

class ControlClient {
 public:
  // Connects and proves knowledge of the job's secret (the coordinator's challenge).
  // hosts: one address, or several separated by commas, tried in order.
  // `processes`: the job's launched size; reaching a coordinator busy starting many
  // processes may take longer, so the wait for it grows with them.
  ControlClient(const std::string& hosts, unsigned short port, const auth::Key& secret, int processes = 1);

  // Sends the hello and waits for the job's size and addresses. Throws JobAborted.
  // machine: machine_identity(); os_start_ticks: this process's start time on it (0
  // unknown; with getpid() it names the process to others on the machine).
  JobStart handshake(int pid, int requested_nprocs, const std::string& address, const std::string& machine,
                     std::uint64_t os_start_ticks);

  // Tells the coordinator to stop the job with message, and waits (bounded) until it has
  // printed it.
  void abort(const std::string& message);

  // Non-blocking: set if the coordinator said stop, or is gone.
  std::optional<JobAborted> poll_abort();

  // Reached bsp_end (report: "key=value ..." statistics). Then finished() tells when
  // every process has.
  void done(const std::string& report);
  // The progress watchdog's report (see MessageType::stall).
  // awaited: (pid, seconds since anything moved between it and this process).
  void stall(long superstep, double waited_seconds, const std::vector<std::pair<int, double>>& awaited);
  // Waits up to timeout for the coordinator's word that all processes reached bsp_end.
  // Throws JobAborted if it says stop instead.
  bool finished(std::chrono::milliseconds timeout);

  int fd() { return socket_.native_handle(); }
  // How often the session was closed before it was proven and made again (a flood of
  // strangers' sessions pushed it out): --stats reports it as control_reconnects.
  int reconnects() const { return reconnects_; }
  // This host's address on the connection to the coordinator: the interface that reaches
  // the job's other hosts.
  std::string local_address() const;

 private:
  std::string connect_to(const std::vector<std::string>& candidates, unsigned short port);
  bool prove(const auth::Key& secret);
  // Reads one message if one arrives within timeout; returns false on timeout.
  bool read_message(std::chrono::milliseconds timeout, std::uint8_t& type, std::string& body);

  boost::asio::io_context io_;
  boost::asio::ip::tcp::socket socket_;
  std::chrono::milliseconds connect_timeout_;  // reaching the coordinator and proving: grows with the job
  std::string pending_;                        // bytes read but not yet a whole message
  int reconnects_ = 0;
};

}  // namespace bsp::control
