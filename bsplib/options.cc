// bsplib/options.cc: BSP_* environment variables -> RunOptions.
#include "bsplib/options.h"

#include <fmt/format.h>

#include <cstdlib>
#include <stdexcept>

namespace bsp {
namespace {

const char* env(const char* name) { return std::getenv(name); }

long number(const char* name, const char* text) {
  char* end = nullptr;
  long value = std::strtol(text, &end, 10);
  if (!*text || *end) throw std::runtime_error(fmt::format("{}={} is not a whole number", name, text));
  return value;
}

// A whole number from low to high, or a clear error naming the variable.
long bounded(const char* name, const char* text, long low, long high, const char* what) {
  long value = number(name, text);
  if (value < low || value > high) {
    throw std::runtime_error(fmt::format("{}={} is out of range: {} must be from {} to {}", name, text, what, low, high));
  }
  return value;
}

// Seconds, a decimal number from 0.1 to a day (an optional trailing "s" is allowed).
double seconds(const char* name, const char* text) {
  char* end = nullptr;
  double value = std::strtod(text, &end);
  if (end && *end == 's') ++end;
  if (!*text || !end || *end || !(value >= 0.1 && value <= 86400)) {
    throw std::runtime_error(fmt::format("{}={} must be a time in seconds from 0.1 to 86400", name, text));
  }
  return value;
}

constexpr const char* kTransportKeys[] = {"rcvbuf", "sndbuf", "mtu", "iface", "host", "pace", "trace"};

}  // namespace

RunOptions options_from_environment() {
  RunOptions options;
  if (const char* v = env("BSP_TRANSPORT"); v && *v) options.transport = v;
  if (const char* v = env("BSP_STATS"); v && *v) options.stats = std::string(v) != "0";
  if (const char* v = env("BSP_SPIN_US"); v && *v) {
    options.spin_us = static_cast<int>(bounded("BSP_SPIN_US", v, 0, 1000000, "the spin time in microseconds"));
  }
  if (const char* v = env("BSP_BUFFERS"); v && *v) {
    // 0 keeps the default; fewer than 8 cannot keep a burst moving, more than 65536
    // frames (512 MiB of 8 KiB frames) is a typing error rather than a pool.
    long buffers = number("BSP_BUFFERS", v);
    if (buffers != 0) buffers = bounded("BSP_BUFFERS", v, 8, 65536, "the reliable layer's pool (buffers)");
    options.buffers = static_cast<std::size_t>(buffers);
  }
  if (const char* v = env("BSP_ACK_POLICY"); v && *v) options.ack_policy = v;
  if (const char* v = env("BSP_FAULT"); v && *v) options.fault = v;
  if (const char* v = env("BSP_STALL_WARN"); v && *v) {
    options.stall_warn_seconds = seconds("BSP_STALL_WARN", v);
  }
  if (const char* v = env("BSP_LINK_TIMEOUT"); v && *v) {
    options.link_timeout_seconds = seconds("BSP_LINK_TIMEOUT", v);
  }
  if (const char* v = env("BSP_LIBRARY_LEVEL"); v && *v) {
    options.library_level = static_cast<int>(number("BSP_LIBRARY_LEVEL", v));
    if (options.library_level < 0 || options.library_level > 2) {
      throw std::runtime_error(fmt::format("BSP_LIBRARY_LEVEL={} must be 0, 1 or 2", v));
    }
  }
  for (const char* key : kTransportKeys) {
    std::string name = "BSP_";
    for (const char* c = key; *c; ++c) name += static_cast<char>(std::toupper(*c));
    if (const char* v = env(name.c_str()); v && *v) options.transport_options[key] = v;
  }
  return options;
}

const std::vector<OptionHelp>& option_help() {
  static const std::vector<OptionHelp> help = {
      {"transport", "messaging layer: tcp (default), udp, nic, ... (BSP_TRANSPORT)"},
      {"stats", "print each process's packet and time counters at the end (BSP_STATS=1)"},
      {"spin-us", "microseconds to spin before blocking when waiting (BSP_SPIN_US)"},
      {"buffers", "buffers in the reliable layer's shared pool (BSP_BUFFERS; default: 8 MiB worth, 1024 to 4096)"},
      {"ack-policy", "reliable layer's acknowledgements: buffer (default), every, pupa (BSP_ACK_POLICY)"},
      {"fault", "inject faults on sends, e.g. drop=0.05,dup=0.01,reorder=0.02,corrupt=0.001,seed=7 (BSP_FAULT)"},
      {"library-level", "Oxford's -flibrary-level: 0 full checking, 1 default, 2 fast path (BSP_LIBRARY_LEVEL)"},
      {"stall-warn", "seconds in bsp_sync after which the job says whom it waits for (BSP_STALL_WARN, default 10)"},
      {"link-timeout", "seconds two processes may wait for each other's data before the job stops (BSP_LINK_TIMEOUT, default 30)"},
      {"rcvbuf", "kernel socket receive buffer in bytes (BSP_RCVBUF)"},
      {"sndbuf", "kernel socket send buffer in bytes (BSP_SNDBUF)"},
      {"mtu", "largest frame in bytes for datagram transports (BSP_MTU)"},
      {"iface", "network interface for the nic transport (BSP_IFACE)"},
      {"host", "address to listen on (BSP_HOST, default 127.0.0.1)"},
      {"pace", "minimum gap between datagrams sent, e.g. 20us (BSP_PACE)"},
      {"trace", "write every frame sent and received to FILE.pcap (BSP_TRACE)"},
  };
  return help;
}

}  // namespace bsp
