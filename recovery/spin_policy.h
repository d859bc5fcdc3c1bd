// recovery/spin_policy.h: how long a waiting process spins (polls, yielding the core)
// before it blocks, from how many of the job's processes share this host's cores.
// Spinning pays while the peer waited for runs on another core or shares one with few
// others (a blocked process costs 60-80 us to wake); with many more processes than cores,
// spinners only yield to other spinners and delay the processes with work (measured:
// ~15% of the time at p = 64 on 2 cores). The rule is in docs/tuning.md.
#pragma once

#include <string>
#include <vector>

namespace bsp::recovery {

// The spin before blocking when the user gave none: kDefaultSpinUs while every process
// has a core; kSharedCoreSpinUs while up to kFullSpinProcessesPerCore share each core (a
// yielding spin hands the core straight to the peer it waits for, where blocking would
// pay a wake-up and the scheduler's delay each time: NAS class W at p = 4 on 2 cores, SP
// 1.27 -> 0.82 s, BT 0.64 -> 0.49, LU 1.10 -> 0.87, no loss elsewhere; LU at p = 8 1.61 ->
// 0.96); none beyond (see tuning.md).
inline constexpr int kDefaultSpinUs = 100;
inline constexpr int kSharedCoreSpinUs = 500;
inline constexpr int kFullSpinProcessesPerCore = 4;
int default_spin_us(int processes_on_host, int cores);

// Cores this process may run on (sched_getaffinity; 1 if that fails).
int usable_cores();

// This machine's identity: the running kernel's boot id. Processes that report the same
// one share this machine's cores, whatever network namespace, address or host name they
// have (the emulated cluster's hosts are namespaces of one machine). "" if unreadable.
std::string machine_identity();

// How many of the job's processes share the cores of pid `self`, self included: those
// whose machine (machines[i], from machine_identity()) is self's; by host address
// (processes_on_host) when self's machine is unknown.
int processes_on_machine(const std::vector<std::string>& machines, const std::vector<std::string>& addresses, int self);

// How many of the job's processes (addresses[i]: pid i's transport address) run on the
// host of pid `self`, self included. Hosts are told apart by what each transport
// publishes: shm's host key (also the local half of a hybrid address), nic's interface mac,
// the IPv4 address of tcp/udp (every 127.x address is this host). Empty addresses (pids
// outside the job) are not counted.
int processes_on_host(const std::vector<std::string>& addresses, int self);

// The host part of one address as above ("" when there is none to tell).
std::string host_of_address(const std::string& address);

}  // namespace bsp::recovery
