// bsplib/launch/remote_hosts.h: bsprun's side of the processes it starts on other hosts.
// One remote-shell session per host (`ssh HOST bsprun --agent`, or --rsh's command):
// sends the agent the job's setup and pid 0's standard input, prints what the processes
// write, reports how each ended to the coordinator, and stops the job naming the host when
// a session ends early or its agent falls silent (agent_protocol.h).
#pragma once

#include <sys/types.h>

#include <boost/asio.hpp>
#include <memory>
#include <string>
#include <vector>

#include "bsplib/control/coordinator.h"
#include "bsplib/launch/agent_protocol.h"
#include "bsplib/launch/host_list.h"
#include "bsplib/launch/output_forwarder.h"

namespace bsp::launch {

class RemoteHosts {
 public:
  // rsh: the remote shell's command words (e.g. {"ssh", "-x"}); agent: this bsprun's
  // path, which every host must have (as Open MPI's orted).
  RemoteHosts(boost::asio::io_context& io, std::vector<std::string> rsh, std::string agent, OutputForwarder& output);
  ~RemoteHosts();

  // Starts the agent on placement's host with setup (setup.pids filled in here).
  void start(const Placement& placement, AgentSetup setup);
  // From now on, reports go to the coordinator (set before io runs).
  void attach(control::Coordinator& coordinator);
  // Forwards this process's standard input to pid 0, which runs on a remote host.
  void forward_stdin();
  // Tells every agent to kill its processes (the coordinator's kill after an abort).
  void kill_all();

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace bsp::launch
