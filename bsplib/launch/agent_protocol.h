// bsplib/launch/agent_protocol.h: what bsprun and its agent on another host say to each
// other over the remote shell's standard input and output (one session per host). Frames
// are the control plane's ([u32 body length][u8 kind][body], control/protocol.h):
//
//  bsprun -> agent   setup      the job (below); first, once
//                    stdin      bytes for pid 0's standard input      stdin_end  (empty)
//                    heartbeat  (empty), every kHeartbeat             kill       (empty)
//  agent -> bsprun   started    i32 pid, i32 OS pid
//                    output     i32 pid, u32 stream (1 stdout, 2 stderr), bytes
//                    exited     i32 pid, i32 wait status, u32 began bsp_begin (0/1),
//                               str why it could not start ("" if it did; start_report.h)
//                    heartbeat  (empty), every kHeartbeat             failed  str message
//
// Either side that hears nothing for its silence limit takes the other as gone: bsprun
// stops the job naming the host; the agent kills its processes. The job's secret travels
// in setup, inside the remote shell's encrypted channel, and reaches the processes as it
// does locally (an inherited memory file).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "auth/mac.h"
#include "bsplib/control/protocol.h"

namespace bsp::launch {

enum class AgentMessage : std::uint8_t {
  setup = 1,
  stdin_data = 2,
  stdin_end = 3,
  heartbeat = 4,
  kill = 5,
  started = 16,
  output = 17,
  exited = 18,
  failed = 19,
};

inline constexpr std::chrono::milliseconds kHeartbeat{100};
// bsprun takes a host as unreachable after this long without a word from its agent
// (the required bound is 1 s from the failure to the job's stop).
inline constexpr std::chrono::milliseconds kAgentSilenceLimit{600};
// An agent kills its processes after this long without a word from bsprun (bsprun gone,
// or the host cut off; an ssh session that ends says so at once by end-of-file).
inline constexpr std::chrono::milliseconds kLauncherSilenceLimit{3000};
// How long a remote shell may take to start the agent and hear from it: 30 s, and 2 s
// more for every host bsprun starts at once (their ssh handshakes share this machine).
inline constexpr std::chrono::milliseconds kAgentStartLimit{30000};
inline constexpr std::chrono::milliseconds kAgentStartPerHost{2000};
// A frame's body is at most this big either way (output is sent in smaller chunks).
inline constexpr std::uint32_t kMaxAgentFrame = 1u << 20;
inline constexpr std::size_t kOutputChunk = 16384;

struct AgentSetup {
  auth::Key secret{};
  std::uint32_t job_id = 0;
  std::string control_hosts;  // the coordinator's addresses, comma-separated
  std::uint32_t control_port = 0;
  std::uint32_t processes = 0;           // launched in the whole job
  std::string directory;                 // working directory of the processes
  std::vector<std::string> argv;         // the program and its arguments
  std::vector<std::string> environment;  // NAME=VALUE, set in every process
  std::vector<int> pids;                 // the pids this host runs
};

inline control::MessageWriter agent_message(AgentMessage kind) {
  return control::MessageWriter(static_cast<control::MessageType>(kind));
}

inline std::string encode_setup(const AgentSetup& setup) {
  control::MessageWriter writer = agent_message(AgentMessage::setup);
  writer.str(std::string_view(reinterpret_cast<const char*>(setup.secret.data()), setup.secret.size()));
  writer.u32(setup.job_id).str(setup.control_hosts).u32(setup.control_port).u32(setup.processes).str(setup.directory);
  writer.u32(static_cast<std::uint32_t>(setup.argv.size()));
  for (const std::string& arg : setup.argv) writer.str(arg);
  writer.u32(static_cast<std::uint32_t>(setup.environment.size()));
  for (const std::string& variable : setup.environment) writer.str(variable);
  writer.u32(static_cast<std::uint32_t>(setup.pids.size()));
  for (int pid : setup.pids) writer.i32(pid);
  return writer.bytes();
}

// Throws std::runtime_error on a malformed body.
inline AgentSetup decode_setup(std::string_view body) {
  control::MessageReader reader(body);
  AgentSetup setup;
  std::string secret = reader.str();
  if (secret.size() != setup.secret.size()) throw std::runtime_error("setup: the job secret has the wrong size");
  std::memcpy(setup.secret.data(), secret.data(), secret.size());
  setup.job_id = reader.u32();
  setup.control_hosts = reader.str();
  setup.control_port = reader.u32();
  setup.processes = reader.u32();
  setup.directory = reader.str();
  auto count = [&reader](std::uint32_t limit, const char* what) {
    std::uint32_t n = reader.u32();
    if (n > limit) throw std::runtime_error(std::string("setup: too many ") + what);
    return n;
  };
  for (std::uint32_t n = count(65536, "arguments"); n > 0; --n) setup.argv.push_back(reader.str());
  for (std::uint32_t n = count(65536, "variables"); n > 0; --n) setup.environment.push_back(reader.str());
  for (std::uint32_t n = count(65535, "pids"); n > 0; --n) {
    int pid = reader.i32();
    if (pid < 0 || static_cast<std::uint32_t>(pid) >= setup.processes)
      throw std::runtime_error("setup: pid out of range");
    setup.pids.push_back(pid);
  }
  if (setup.argv.empty()) throw std::runtime_error("setup: no program");
  if (setup.control_port == 0 || setup.control_port > 65535) throw std::runtime_error("setup: no coordinator port");
  return setup;
}

}  // namespace bsp::launch

namespace bsp::launch {

// Collects bytes of a frame stream and hands out whole frames; every length is checked
// against kMaxAgentFrame before anything is kept.
class FrameAssembler {
 public:
  void append(const char* data, std::size_t size) { pending_.append(data, size); }
  // The next whole frame, if any. Throws std::runtime_error on an oversized frame.
  bool next(AgentMessage& kind, std::string& body) {
    if (pending_.size() < control::kFrameHeader) return false;
    std::uint32_t length;
    std::memcpy(&length, pending_.data(), 4);
    if (length > kMaxAgentFrame) throw std::runtime_error("a frame announces more than 1 MiB");
    if (pending_.size() < control::kFrameHeader + length) return false;
    kind = static_cast<AgentMessage>(pending_[4]);
    body.assign(pending_, control::kFrameHeader, length);
    pending_.erase(0, control::kFrameHeader + length);
    return true;
  }

 private:
  std::string pending_;
};

}  // namespace bsp::launch
