// bsplib/launch/host_addresses.h: this host's IPv4 addresses, as launchers and processes
// need them: the address of a named interface, every address a process on another host
// might reach this one by, and whether a host name means this host.
#pragma once

#include <string>
#include <vector>

namespace bsp::launch {

// The IPv4 address of interface `name` ("" if it has none); with name "", of the first
// interface that is up and not loopback.
std::string interface_address(const std::string& name);

// Every IPv4 address of this host's interfaces that are up, loopback last.
std::vector<std::string> local_addresses();

// True when `host` (a name or an address) resolves to an address of this host, or is
// "localhost": processes placed there are started without a remote shell.
bool is_this_host(const std::string& host);

}  // namespace bsp::launch
