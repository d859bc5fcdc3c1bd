// bsplib/machine_share.h: which of the job's processes share this machine's cores, told
// from what each reported at start-up (its machine's boot id, its transport address).
// The runtime asks once per process; the spin before blocking (recovery/spin_policy.h)
// follows the count, core pinning (core_pinning.h) the count and the rank.
#pragma once

#include <string>
#include <vector>

namespace bsp {

// This machine's identity: the running kernel's boot id. Processes that report the same
// one share this machine's cores, whatever network namespace, address or host name they
// have (the emulated cluster's hosts are namespaces of one machine). "" if unreadable.
std::string machine_identity();

// The host part of a transport address ("" when there is none to tell): shm's host key
// (also the local half of a hybrid address), nic's interface mac, the IPv4 address of
// tcp/udp (every 127.x address is this host).
std::string host_of_address(const std::string& address);

// The processes sharing pid self's machine, self included, and self's rank among them
// (how many of them have a lower pid).
struct MachineShare {
  int processes = 1;
  int rank = 0;
  std::vector<int> members;  // their pids, in order (self alone when nothing tells; none for self < 0)
};

// Told apart by machine (machines[i], from machine_identity()) when self's is known, else
// by host address (addresses[i]; an empty one is a pid outside the job and not counted).
// Self alone (1, 0) when neither tells anything.
MachineShare machine_share(const std::vector<std::string>& machines, const std::vector<std::string>& addresses,
                           int self);

}  // namespace bsp
