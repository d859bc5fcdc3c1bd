// tests/recovery/spin_policy_test.cc: the default spin before blocking: short while
// each process has a core, longer while up to 4 of the job's processes share each core,
// none beyond; and how the
// processes on one host are counted from the addresses each transport publishes, and
// those sharing this machine's cores from the boot ids they report.
#include <gtest/gtest.h>

#include "recovery/spin_policy.h"

namespace bsp::recovery {
namespace {

TEST(SpinPolicyTest, SpinsUnlessTheHostIsCrowded) {
  EXPECT_EQ(default_spin_us(2, 2), kDefaultSpinUs);
  EXPECT_EQ(default_spin_us(16, 16), kDefaultSpinUs);
  EXPECT_EQ(default_spin_us(3, 2), kSharedCoreSpinUs);
  EXPECT_EQ(default_spin_us(8, 2), kSharedCoreSpinUs);
  EXPECT_EQ(default_spin_us(9, 2), 0);
  EXPECT_EQ(default_spin_us(64, 2), 0);
  EXPECT_EQ(default_spin_us(64, 16), kSharedCoreSpinUs);
  EXPECT_EQ(default_spin_us(1, 0), kDefaultSpinUs);  // an unknown core count counts as 1
  EXPECT_EQ(default_spin_us(3, 0), kSharedCoreSpinUs);
  EXPECT_GE(usable_cores(), 1);
}

TEST(SpinPolicyTest, HostsFromAddresses) {
  EXPECT_EQ(host_of_address("127.0.0.1:4000"), host_of_address("127.0.0.2:5000"));
  EXPECT_NE(host_of_address("10.0.0.1:4000"), host_of_address("10.0.0.2:4000"));
  EXPECT_EQ(host_of_address("10.0.0.1:4000"), host_of_address("10.0.0.1:4001"));
  EXPECT_EQ(host_of_address("shm:abc:1:2:3:4:5:6"), host_of_address("hybrid:shm:abc:9:9:9:9:9:9|10.0.0.1:4000"));
  EXPECT_NE(host_of_address("shm:abc:1:2:3:4:5:6"), host_of_address("shm:xyz:1:2:3:4:5:6"));
  EXPECT_EQ(host_of_address("eth0/02:00:00:00:00:01/node"), host_of_address("eth0/02:00:00:00:00:01/node"));
  EXPECT_NE(host_of_address("eth0/02:00:00:00:00:01/node"), host_of_address("eth0/02:00:00:00:00:02/node"));
}

TEST(SpinPolicyTest, CountsTheJobsProcessesOnThisHost) {
  std::vector<std::string> lo(64);
  for (int pid = 0; pid < 64; ++pid) lo[static_cast<std::size_t>(pid)] = "127.0.0.1:" + std::to_string(4000 + pid);
  EXPECT_EQ(processes_on_host(lo, 5), 64);
  // 8 hosts of 8 processes each (the emulated cluster).
  std::vector<std::string> cluster(64);
  for (int pid = 0; pid < 64; ++pid) {
    cluster[static_cast<std::size_t>(pid)] = "10.0.0." + std::to_string(pid % 8 + 1) + ":" + std::to_string(4000 + pid);
  }
  EXPECT_EQ(processes_on_host(cluster, 3), 8);
  EXPECT_EQ(processes_on_host({"10.0.0.1:1", "", "10.0.0.1:2"}, 0), 2);  // "" is not a member
  EXPECT_EQ(processes_on_host({}, 0), 1);
}

// The emulated cluster's hosts are network namespaces of one machine: by address they
// look like 8 hosts of 8, but all 64 processes share this machine's cores (before
// 2026-11-25 they were counted per address, 8 per "host", and spun on 2 cores).
TEST(SpinPolicyTest, CountsTheProcessesSharingThisMachine) {
  std::vector<std::string> cluster(64), one_machine(64, "boot-a");
  for (int pid = 0; pid < 64; ++pid) {
    cluster[static_cast<std::size_t>(pid)] = "10.0.0." + std::to_string(pid % 8 + 1) + ":" + std::to_string(4000 + pid);
  }
  EXPECT_EQ(processes_on_machine(one_machine, cluster, 3), 64);
  EXPECT_EQ(default_spin_us(processes_on_machine(one_machine, cluster, 3), 2), 0);
  // Two real machines of 32.
  std::vector<std::string> two_machines(64);
  for (int pid = 0; pid < 64; ++pid) two_machines[static_cast<std::size_t>(pid)] = pid < 32 ? "boot-a" : "boot-b";
  EXPECT_EQ(processes_on_machine(two_machines, cluster, 40), 32);
  // Self's machine unknown (or an older list): by address.
  std::vector<std::string> unknown(64);
  EXPECT_EQ(processes_on_machine(unknown, cluster, 3), 8);
  EXPECT_EQ(processes_on_machine({}, cluster, 3), 8);
  // This machine's identity is its kernel's boot id.
  EXPECT_EQ(machine_identity().size(), 36u) << machine_identity();
  EXPECT_EQ(machine_identity(), machine_identity());
}

}  // namespace
}  // namespace bsp::recovery
