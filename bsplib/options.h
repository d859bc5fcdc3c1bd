// bsplib/options.h: run-time settings of a BSPlib process. Each comes from an environment
// variable BSP_<NAME> (bsprun turns its --name=value options into these), so one binary
// runs over any transport: BSP_TRANSPORT=udp ./prog works as well as bsprun --transport=udp.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace bsp {

struct RunOptions {
  std::string transport = "tcp";     // BSP_TRANSPORT
  bool stats = false;                // BSP_STATS: report counters at the end (bsprun --stats)
  int spin_us = -1;                  // BSP_SPIN_US: spin before blocking (-1: by cores)
  std::size_t buffers = 0;           // BSP_BUFFERS: reliable layer's buffer pool (0: default)
  std::string ack_policy = "buffer"; // BSP_ACK_POLICY: buffer | every | pupa
  std::string fault;                 // BSP_FAULT: fault injection spec (udp, nic)
  int library_level = 1;             // BSP_LIBRARY_LEVEL: Oxford's -flibrary-level (0, 1, 2)
  double stall_warn_seconds = 10;    // BSP_STALL_WARN: say who a bsp_sync waits for after this
  double link_timeout_seconds = 30;  // BSP_LINK_TIMEOUT: two processes waiting for each other
                                     // this long: their data link is cut, stop the job
  // Transport-specific settings (BSP_RCVBUF, BSP_SNDBUF, BSP_MTU, BSP_IFACE, BSP_HOST,
  // BSP_PACE, BSP_TRACE), passed to the transport by lower-case name.
  std::map<std::string, std::string> transport_options;
};

// Reads the BSP_* environment. Throws std::runtime_error on a malformed value.
RunOptions options_from_environment();

// The option names bsprun accepts as --name=value (documented in `bsprun --help`).
struct OptionHelp {
  const char* name;
  const char* meaning;
};
const std::vector<OptionHelp>& option_help();

}  // namespace bsp
