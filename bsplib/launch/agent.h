// bsplib/launch/agent.h: bsprun's agent on another host (`bsprun --agent`, started by
// the remote shell). It reads the job's setup from standard input, starts this host's
// processes with the job's secret in an inherited memory file, forwards their output and
// exit statuses to bsprun, feeds pid 0's standard input, beats every kHeartbeat, and
// kills its processes when bsprun says so or goes silent (agent_protocol.h).
#pragma once

namespace bsp::launch {

// Runs the agent on standard input and output; returns its exit status.
int run_agent();

}  // namespace bsp::launch
