// tests/machine_share_test.cc: who shares this process's machine, and its rank among
// them (bsplib/machine_share.h), as the spin's rule and core pinning both use it: hosts
// told apart by the addresses each transport publishes, machines by the boot ids the
// processes report; several hosts, hybrid jobs, a process alone on its host.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "bsplib/machine_share.h"

namespace bsp {
namespace {

// (processes, rank) of pid self, for comparing in one expectation.
std::pair<int, int> share_of(const std::vector<std::string>& machines, const std::vector<std::string>& addresses,
                             int self) {
  const MachineShare share = machine_share(machines, addresses, self);
  return {share.processes, share.rank};
}

// 64 processes on 8 hosts by address, pid i on host i % 8 (the emulated cluster).
std::vector<std::string> cluster_of_64() {
  std::vector<std::string> cluster(64);
  for (int pid = 0; pid < 64; ++pid) {
    cluster[static_cast<std::size_t>(pid)] = "10.0.0." + std::to_string(pid % 8 + 1) + ":" + std::to_string(4000 + pid);
  }
  return cluster;
}

TEST(MachineShareTest, HostsFromAddresses) {
  EXPECT_EQ(host_of_address("127.0.0.1:4000"), host_of_address("127.0.0.2:5000"));
  EXPECT_NE(host_of_address("10.0.0.1:4000"), host_of_address("10.0.0.2:4000"));
  EXPECT_EQ(host_of_address("10.0.0.1:4000"), host_of_address("10.0.0.1:4001"));
  EXPECT_EQ(host_of_address("shm:abc:1:2:3:4:5:6"), host_of_address("hybrid:shm:abc:9:9:9:9:9:9|10.0.0.1:4000"));
  EXPECT_NE(host_of_address("shm:abc:1:2:3:4:5:6"), host_of_address("shm:xyz:1:2:3:4:5:6"));
  EXPECT_EQ(host_of_address("eth0/02:00:00:00:00:01/node"), host_of_address("eth0/02:00:00:00:00:01/node"));
  EXPECT_NE(host_of_address("eth0/02:00:00:00:00:01/node"), host_of_address("eth0/02:00:00:00:00:02/node"));
  EXPECT_EQ(host_of_address(""), "");
  EXPECT_EQ(host_of_address("garbage"), "");
}

TEST(MachineShareTest, OneHostByAddress) {
  std::vector<std::string> lo(64);
  for (int pid = 0; pid < 64; ++pid) lo[static_cast<std::size_t>(pid)] = "127.0.0.1:" + std::to_string(4000 + pid);
  EXPECT_EQ(share_of({}, lo, 5), std::make_pair(64, 5));
  EXPECT_EQ(share_of({}, lo, 0), std::make_pair(64, 0));
  EXPECT_EQ(share_of({}, lo, 63), std::make_pair(64, 63));
}

TEST(MachineShareTest, SeveralHostsByAddress) {
  const std::vector<std::string> cluster = cluster_of_64();
  EXPECT_EQ(share_of({}, cluster, 3), std::make_pair(8, 0));  // pids 3, 11, ..., 59
  EXPECT_EQ(share_of({}, cluster, 59), std::make_pair(8, 7));
  EXPECT_EQ(share_of({}, cluster, 27), std::make_pair(8, 3));
  // Pids outside the job ("") are neither counted nor ranked.
  EXPECT_EQ(share_of({}, {"10.0.0.1:1", "", "10.0.0.1:2"}, 0), std::make_pair(2, 0));
  EXPECT_EQ(share_of({}, {"10.0.0.1:1", "", "10.0.0.1:2"}, 2), std::make_pair(2, 1));
}

// shm+tcp over hosts of 2 processes: the shm half names the host, whatever the network
// half says; a process reached only by tcp (no shm half) is on another host.
TEST(MachineShareTest, HybridJobs) {
  const std::vector<std::string> hybrid = {
      "hybrid:shm:aaa:11:3:4:65536:5|10.0.0.1:4000", "hybrid:shm:aaa:12:3:4:65536:5|10.0.0.1:4001",
      "hybrid:shm:bbb:13:3:4:65536:5|10.0.0.2:4000", "hybrid:shm:bbb:14:3:4:65536:5|10.0.0.2:4001", "10.0.0.3:4000"};
  EXPECT_EQ(share_of({}, hybrid, 0), std::make_pair(2, 0));
  EXPECT_EQ(share_of({}, hybrid, 1), std::make_pair(2, 1));
  EXPECT_EQ(share_of({}, hybrid, 3), std::make_pair(2, 1));
  EXPECT_EQ(share_of({}, hybrid, 4), std::make_pair(1, 0));  // alone on its host
  // The same job where every process reported one machine (namespaces of this one).
  const std::vector<std::string> one_machine(hybrid.size(), "boot-a");
  EXPECT_EQ(share_of(one_machine, hybrid, 3), std::make_pair(5, 3));
  EXPECT_EQ(share_of(one_machine, hybrid, 4), std::make_pair(5, 4));
}

// The pids themselves, for the spin's census of who runs (recovery/runnable_census.h).
TEST(MachineShareTest, MembersInPidOrder) {
  EXPECT_EQ(machine_share({}, cluster_of_64(), 27).members, (std::vector<int>{3, 11, 19, 27, 35, 43, 51, 59}));
  EXPECT_EQ(machine_share({"boot-a", "boot-b", "boot-a"}, {}, 2).members, (std::vector<int>{0, 2}));
  EXPECT_EQ(machine_share({}, {"10.0.0.1:1", "", "10.0.0.1:2"}, 0).members, (std::vector<int>{0, 2}));
  EXPECT_EQ(machine_share({}, {"10.0.0.1:4000", "10.0.0.2:4000"}, 1).members, std::vector<int>{1});
  EXPECT_EQ(machine_share({}, {}, 0).members, std::vector<int>{0});
  EXPECT_TRUE(machine_share({}, {"10.0.0.1:1"}, -1).members.empty());
}

TEST(MachineShareTest, AloneOnItsHost) {
  EXPECT_EQ(share_of({}, {"10.0.0.1:4000", "10.0.0.2:4000"}, 1), std::make_pair(1, 0));
  EXPECT_EQ(share_of({"boot-a", "boot-b"}, {"10.0.0.1:4000", "10.0.0.1:4001"}, 1), std::make_pair(1, 0));
  EXPECT_EQ(share_of({}, {}, 0), std::make_pair(1, 0));                      // nothing told
  EXPECT_EQ(share_of({}, {"", "10.0.0.1:1"}, 0), std::make_pair(1, 0));      // its own address unknown
  EXPECT_EQ(share_of({}, {"garbage", "garbage"}, 0), std::make_pair(1, 0));  // no host in it
  EXPECT_EQ(share_of({}, {"10.0.0.1:1"}, 3), std::make_pair(1, 0));          // outside the lists
  EXPECT_EQ(share_of({}, {"10.0.0.1:1"}, -1), std::make_pair(1, 0));
}

// The emulated cluster's hosts are network namespaces of one machine: by address they
// look like 8 hosts of 8, but all 64 processes share this machine's cores (before
// 2026-11-25 they were counted per address, 8 per "host", and spun on 2 cores).
TEST(MachineShareTest, MachinesBeforeAddresses) {
  const std::vector<std::string> cluster = cluster_of_64();
  const std::vector<std::string> one_machine(64, "boot-a");
  EXPECT_EQ(share_of(one_machine, cluster, 3), std::make_pair(64, 3));
  // Two real machines of 32.
  std::vector<std::string> two_machines(64);
  for (int pid = 0; pid < 64; ++pid) two_machines[static_cast<std::size_t>(pid)] = pid < 32 ? "boot-a" : "boot-b";
  EXPECT_EQ(share_of(two_machines, cluster, 40), std::make_pair(32, 8));
  EXPECT_EQ(share_of(two_machines, cluster, 31), std::make_pair(32, 31));
  // Self's machine unknown (or an older list): by address.
  EXPECT_EQ(share_of(std::vector<std::string>(64), cluster, 3), std::make_pair(8, 0));
  EXPECT_EQ(share_of({}, cluster, 11), std::make_pair(8, 1));
  // A machine list longer than the address list still counts by machine.
  EXPECT_EQ(share_of({"boot-a", "boot-a", "boot-a"}, {"10.0.0.1:1"}, 2), std::make_pair(3, 2));
  // This machine's identity is its kernel's boot id.
  EXPECT_EQ(machine_identity().size(), 36u) << machine_identity();
  EXPECT_EQ(machine_identity(), machine_identity());
}

}  // namespace
}  // namespace bsp
