// bsplib/options.cc: the table of run-time options, and BSP_* environment -> RunOptions.
#include "bsplib/options.h"

#include <fmt/format.h>

#include <cctype>
#include <cstdlib>
#include <stdexcept>

namespace bsp {
namespace {

using Setter = std::function<void(RunOptions&, const std::string&, const std::string&)>;

long number(const std::string& variable, const std::string& text) {
  char* end = nullptr;
  long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end) throw std::runtime_error(fmt::format("{}={} is not a whole number", variable, text));
  return value;
}

// A whole number from low to high (or exactly `also`), or a clear error.
long bounded(const std::string& variable, const std::string& text, long low, long high, long also = -1) {
  long value = number(variable, text);
  if ((value < low || value > high) && value != also) {
    throw std::runtime_error(fmt::format("{}={} is out of range: from {} to {}{}", variable, text, low, high,
                                         also >= 0 ? fmt::format(", or {}", also) : ""));
  }
  return value;
}

// Seconds, a decimal number from 0.1 to a day (an optional trailing "s" is allowed).
double seconds(const std::string& variable, const std::string& text) {
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (end && *end == 's') ++end;
  if (text.empty() || !end || *end || !(value >= 0.1 && value <= 86400)) {
    throw std::runtime_error(fmt::format("{}={} must be a time in seconds from 0.1 to 86400", variable, text));
  }
  return value;
}

std::string one_of(const std::string& variable, const std::string& text, std::initializer_list<const char*> choices) {
  for (const char* choice : choices) {
    if (text == choice) return text;
  }
  throw std::runtime_error(fmt::format("{}={} must be one of {}", variable, text, fmt::join(choices, ", ")));
}

std::string transport_key(const char* name) {
  std::string key = name;
  for (char& c : key) c = c == '-' ? '_' : c;
  return key;
}

// A transport setting: checked here when it is a number in a range, stored by name.
Setter transport_number(const char* name, long low, long high) {
  return [key = transport_key(name), low, high](RunOptions& o, const std::string& variable, const std::string& v) {
    bounded(variable, v, low, high);
    o.transport_options[key] = v;
  };
}
Setter transport_text(const char* name) {
  return [key = transport_key(name)](RunOptions& o, const std::string&, const std::string& v) {
    o.transport_options[key] = v;
  };
}

}  // namespace

const std::vector<OptionSpec>& option_table() {
  static const std::vector<OptionSpec> table = {
      {"transport", "job", "shm+tcp",
       "messaging layer: shm (shared memory; one host), tcp (kernel TCP streams), udp (datagrams with our "
       "recovery), nic (raw Ethernet frames through AF_PACKET rings; needs CAP_NET_RAW), or a hybrid shm+tcp, "
       "shm+udp, shm+nic (shared memory between the processes of one host, the network between hosts). The "
       "default, shm+tcp, is the fastest correct choice for any placement: shm alone on one host; tcp, udp and "
       "nic alone mean exactly that, for comparisons. `bsprun --help` lists what is built in",
       [](RunOptions& o, const std::string&, const std::string& v) { o.transport = v; }},
      {"stats", "job", "0", "1: print each process's packet counters and communication time at the end",
       [](RunOptions& o, const std::string&, const std::string& v) { o.stats = v != "0"; }},
      {"profile", "job", "",
       "record every superstep of every process (computation and sync time, h in bytes and messages, puts, gets, "
       "sends, packets, retransmissions, acks, the call site of bsp_sync) to FILE (mode 0600; %e: the program's "
       "name, %t: the transport); `bspprof FILE` draws it",
       [](RunOptions& o, const std::string&, const std::string& v) { o.profile = v; }},
      {"library-level", "engine", "1",
       "Oxford's -flibrary-level: 0 and 1 check puts and gets against the remote registration at the call, 2 only "
       "where they land; argument checks stay on at every level",
       [](RunOptions& o, const std::string& var, const std::string& v) {
         o.library_level = static_cast<int>(bounded(var, v, 0, 2));
       }},
      {"stall-warn", "engine", "10",
       "seconds a process may wait in bsp_sync before the job says whom it waits for (0.1 to 86400)",
       [](RunOptions& o, const std::string& var, const std::string& v) { o.stall_warn_seconds = seconds(var, v); }},
      {"pull-threshold", "engine", "256",
       "bytes from which a put, hp-put or get reply to a peer reached through shm is staged and pulled by the "
       "receiver (two copies) instead of pushed through the ring (four); 0: never pull (0 to 2147483647)",
       [](RunOptions& o, const std::string& var, const std::string& v) {
         o.pull_threshold = bounded(var, v, 0, 2147483647L);
       }},
      {"combine-puts", "engine", "1",
       "1: consecutive bsp_puts into adjacent bytes of one registration on one process travel as one record "
       "(Oxford's -fcombine-puts); 0: one record per put",
       [](RunOptions& o, const std::string&, const std::string& v) { o.combine_puts = v != "0"; }},
      {"sync", "engine", "auto",
       "the superstep protocol: dense (an `end` record to every process: one round, p - 1 frames each), sparse "
       "(data only where it goes, acknowledged, then a dissemination barrier: about 2 log2 p frames each), or auto "
       "(sparse from --sync-threshold processes on)",
       [](RunOptions& o, const std::string& var, const std::string& v) {
         if (v != "dense" && v != "sparse" && v != "auto") {
           throw std::runtime_error(fmt::format("{}={}: expected dense, sparse or auto", var, v));
         }
         o.sync = v;
       }},
      {"sync-threshold", "engine", "16",
       "with --sync=auto, the number of processes from which the sparse protocol runs (1 to 1000000)",
       [](RunOptions& o, const std::string& var, const std::string& v) {
         o.sync_threshold = static_cast<int>(bounded(var, v, 1, 1000000));
       }},
      {"sync-radix", "engine", "2",
       "the radix k of the sparse protocol's dissemination barrier: ceil(log_k p) rounds of k - 1 messages each "
       "(2 to 64; every process of a job must use the same)",
       [](RunOptions& o, const std::string& var, const std::string& v) {
         o.sync_radix = static_cast<int>(bounded(var, v, 2, 64));
       }},
      {"link-timeout", "job", "30",
       "seconds two processes may wait for each other's data before the job stops: their link is cut (0.1 to 86400)",
       [](RunOptions& o, const std::string& var, const std::string& v) { o.link_timeout_seconds = seconds(var, v); }},
      {"start-timeout", "job", "auto",
       "seconds the job's start may go without a process joining before it stops naming the pids not joined "
       "(0.1 to 86400); auto: 120 + 0.5 per process + 10 per other host, each join restarting the wait",
       [](RunOptions& o, const std::string& var, const std::string& v) {
         o.start_timeout_seconds = v == "auto" ? 0 : seconds(var, v);
       }},
      {"spin-us", "engine", "100 or 0",
       "microseconds to poll (yielding the core) before blocking when waiting (0 to 1000000); by default 100, or 0 when more than 4 of the job's processes per core run on this host",
       [](RunOptions& o, const std::string& var, const std::string& v) {
         o.spin_us = static_cast<int>(bounded(var, v, 0, 1000000));
       }},
      {"buffers", "reliable layer", "0",
       "frame buffers in the shared pool of udp and nic: 8 to 65536, or 0 for 8 MiB worth (1024 to 4096)",
       [](RunOptions& o, const std::string& var, const std::string& v) {
         o.buffers = static_cast<std::size_t>(bounded(var, v, 8, 65536, 0));
       }},
      {"ack-policy", "reliable layer", "buffer",
       "acknowledgements of udp and nic: buffer (paper 001's), every, pupa",
       [](RunOptions& o, const std::string& var, const std::string& v) {
         o.ack_policy = one_of(var, v, {"buffer", "every", "pupa"});
       }},
      {"fault", "reliable layer", "",
       "seeded, repeatable faults on the sending side of udp or nic, e.g. "
       "drop=0.05,dup=0.01,reorder=0.02,corrupt=0.001,seed=7 (tcp refuses)",
       [](RunOptions& o, const std::string&, const std::string& v) { o.fault = v; }},
      {"rcvbuf", "transport", "udp 16 MiB", "kernel socket receive buffer in bytes (4096 to 1073741824)",
       transport_number("rcvbuf", 4096, 1L << 30)},
      {"sndbuf", "transport", "nic 4 MiB", "kernel socket send buffer in bytes (4096 to 1073741824)",
       transport_number("sndbuf", 4096, 1L << 30)},
      {"mtu", "transport", "by link", "largest frame in bytes for udp and nic (64 to 65535)",
       transport_number("mtu", 64, 65535)},
      {"iface", "transport", "by host", "network interface for the nic transport", transport_text("iface")},
      {"host", "transport", "127.0.0.1", "address tcp and udp listen on (and nic finds its interface by)",
       transport_text("host")},
      {"pace", "transport", "", "minimum gap between datagrams udp sends, e.g. 20us", transport_text("pace")},
      {"udp-offload", "transport", "1",
       "1: udp sends runs of equal frames to one peer in one system call (UDP_SEGMENT; on loopback) and takes "
       "arrivals the kernel coalesced (UDP_GRO), where the kernel can; 0: one datagram per frame both ways (0 to 1)",
       transport_number("udp-offload", 0, 1)},
      {"rx-ring", "transport", "nic default", "frames in nic's receive ring (16 to 1048576)",
       transport_number("rx-ring", 16, 1L << 20)},
      {"tx-ring", "transport", "nic default", "frames in nic's transmit ring (16 to 1048576)",
       transport_number("tx-ring", 16, 1L << 20)},
      {"nic-rx", "transport", "v2",
       "how nic receives: v2 (TPACKET_V2 ring, a status word per frame) or v3 (TPACKET_V3 blocks; "
       "a block not yet full waits up to 1 ms)",
       transport_text("nic-rx")},
      {"nic-tx", "transport", "send",
       "how nic sends: send (sendmmsg straight from the reliable layer's buffers) or ring "
       "(TPACKET_V2 transmit ring, frames copied in and refreshed at the kick; needs nic-rx=v2)",
       transport_text("nic-tx")},
      {"shm-ring", "transport", "by p",
       "bytes of each shm ring (one per sender in each process's inbox), a power of two (4096 to 1073741824; "
       "default 16 MiB / (p - 1) within 64 KiB .. 4 MiB)",
       transport_number("shm-ring", 4096, 1L << 30)},
      {"connect-timeout-ms", "transport", "60000",
       "milliseconds a tcp connection (made on first use) may take to be made and proven before its peer is reported lost, or nic's segment check (default there 5000 + 50 per process) may go without progress before it names the pids still missing (1000 to 3600000)",
       transport_number("connect-timeout-ms", 1000, 3600000)},
      {"tcp-connections", "transport", "by RLIMIT_NOFILE",
       "data connections tcp keeps open at once (1 to 1048576): connections are made on first use, and the least "
       "recently used is closed in order when a new one would exceed this (accepted ones up to twice it); "
       "default: a third of what RLIMIT_NOFILE leaves after 256 descriptors",
       transport_number("tcp-connections", 1, 1L << 20)},
      {"trace", "transport", "", "write every frame each process sends and receives to FILE.<pid>.pcap (mode 0600)",
       transport_text("trace")},
  };
  return table;
}

std::string environment_variable(const OptionSpec& option) {
  std::string name = "BSP_";
  for (const char* c = option.name; *c; ++c) {
    name += *c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(*c)));
  }
  return name;
}

std::string options_markdown() {
  std::string table = "| option | environment | layer | default | meaning |\n|---|---|---|---|---|\n";
  for (const OptionSpec& option : option_table()) {
    table += fmt::format("| `--{}=` | `{}` | {} | {} | {} |\n", option.name, environment_variable(option),
                         option.scope, *option.default_value ? option.default_value : "—", option.help);
  }
  return table;
}

RunOptions options_from_environment() {
  RunOptions options;
  for (const OptionSpec& option : option_table()) {
    std::string variable = environment_variable(option);
    if (const char* value = std::getenv(variable.c_str()); value && *value) option.set(options, variable, value);
  }
  return options;
}

}  // namespace bsp
