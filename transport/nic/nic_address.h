// transport/nic/nic_address.h: the address a nic process publishes to its peers,
// "INTERFACE/MAC/HOST" (processes of older builds published "INTERFACE/MAC"), read as
// hostile input, and the reachability check that needs no traffic: an interface without
// an Ethernet address (lo) carries frames only within its own host, so a process on it
// cannot reach a process on another host or on another interface.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "transport/nic/packet_socket.h"

namespace bsp::transport::nic {

struct NicAddress {
  std::string interface;  // e.g. "eth0"
  MacAddress mac{};
  std::string host;  // the host's name (gethostname); "" when the peer did not say

  // lo, or an interface whose MAC is all zero: its frames never leave the host.
  bool host_local() const;
  // "pid 3 (host b, eth0 52:54:00:12:34:56)" for messages.
  std::string describe(int pid) const;
};

// This host's name, "" when it has none.
std::string this_host_name();

std::string format_address(const NicAddress& address);
// Parses pid's published address; throws std::runtime_error naming the pid and what is
// wrong, quoting (a bounded, printable part of) the text.
NicAddress parse_address(std::string_view text, int pid);

// "" when, judging by the addresses alone, pid may reach every peer by raw frames; else
// a message naming the pids, their hosts and interfaces, and what to do instead.
std::string static_reachability_error(const std::vector<NicAddress>& addresses, int pid);

}  // namespace bsp::transport::nic
