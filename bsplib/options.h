// bsplib/options.h: run-time settings of a BSPlib process. Each comes from an environment
// variable BSP_<NAME> (bsprun turns its --name=value options into these), so one binary
// runs over any transport: BSP_TRANSPORT=udp ./prog works as well as bsprun --transport=udp.
//
// One table (option_table()) says everything about every option: its name, the layer it
// belongs to, its default, its limits and its help. The transport layer's rows come from
// the specs each transport registers with its factory (transport/registry.h). Parsing, validation, `bsprun --help`
// and the README's table (`bsprun --help=markdown`) are all made from it. A second table
// (launcher_option_table()) holds the options bsprun handles itself (-n, --hosts, ...); both
// make `bsprun --help` and the OPTIONS section of bsprun(1) (`bsprun --help=man`).
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace bsp {

struct RunOptions {
  std::string transport = "shm+tcp";      // BSP_TRANSPORT
  bool stats = false;                     // BSP_STATS: report counters at the end (bsprun --stats)
  std::string profile;                    // BSP_PROFILE: superstep profile to this file ("": off)
  bool overwrite = false;                 // BSP_OVERWRITE: --profile and --trace may replace files
  int spin_us = -1;                       // BSP_SPIN_US: spin before blocking (-1: the default)
  int slice_us = 0;                       // BSP_SLICE_US: scheduler slice asked for (0: the kernel's)
  std::size_t buffers = 0;                // BSP_BUFFERS: reliable layer's buffer pool (0: default)
  std::string ack_policy = "buffer";      // BSP_ACK_POLICY: buffer | every | pupa
  std::string fault;                      // BSP_FAULT: fault injection spec (udp, nic)
  int library_level = 1;                  // BSP_LIBRARY_LEVEL: Oxford's -flibrary-level (0, 1, 2)
  double stall_warn_seconds = 10;         // BSP_STALL_WARN: say who a bsp_sync waits for after this
  bool combine_puts = true;               // BSP_COMBINE_PUTS: adjacent puts share one record
  bool pin = false;                       // BSP_PIN: a core per process on a host with cores to spare
  bool superstep_lines = true;            // BSP_SUPERSTEP_LINES: small supersteps in one shm cache line
  std::string quiet_supersteps = "auto";  // BSP_QUIET_SUPERSTEPS: auto | 1 | 0 (engine_quiet.cc)
  std::string sync = "auto";              // BSP_SYNC: dense | sparse | auto (the superstep protocol)
  int sync_threshold = 16;                // BSP_SYNC_THRESHOLD: auto runs sparse from this many processes
  int sync_radix = 2;                     // BSP_SYNC_RADIX: the sparse protocol's barrier radix
  long pull_threshold = 256;              // BSP_PULL_THRESHOLD: shm pulls transfers this large (0: never)
  double start_timeout_seconds = 0;       // BSP_START_TIMEOUT: start-up's wait for joins (0: automatic)
  double link_timeout_seconds = 30;       // BSP_LINK_TIMEOUT: two processes waiting for each other
                                          // this long: their data link is cut, stop the job
  // Transport settings (BSP_RCVBUF, BSP_SNDBUF, BSP_MTU, BSP_IFACE, BSP_HOST, BSP_PACE,
  // BSP_RX_RING, BSP_TX_RING, BSP_TRACE), passed to the transport by name (rx_ring, ...).
  std::map<std::string, std::string> transport_options;
};

struct OptionSpec {
  const char* name;           // bsprun --name=VALUE; environment BSP_NAME ('-' -> '_')
  const char* scope;          // the layer it configures: job, engine, reliable layer, transport
  const char* default_value;  // as shown to users
  const char* help;           // one line, limits included
  // Checks value (from variable) and stores it; throws std::runtime_error naming the
  // variable and the accepted values.
  std::function<void(RunOptions&, const std::string& variable, const std::string& value)> set;
};

const std::vector<OptionSpec>& option_table();
// BSP_NAME for an option.
std::string environment_variable(const OptionSpec& option);
// The README's table of options, in Markdown.
std::string options_markdown();

// An option bsprun handles itself rather than passing to the processes.
struct LauncherOption {
  const char* spelling;  // as typed, with its value's placeholder: "-n P, --nprocs=P"
  const char* help;      // one line
};
const std::vector<LauncherOption>& launcher_option_table();

// bsprun(1)'s OPTIONS section in troff (man macros): both tables, each run-time option with
// its environment variable, layer and default.
std::string options_man();

// Reads the BSP_* environment. Throws std::runtime_error on a malformed value.
RunOptions options_from_environment();

}  // namespace bsp
