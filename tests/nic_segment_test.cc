// tests/nic_segment_test.cc: a nic job whose processes' interfaces are not on one
// Ethernet segment stops at set-up, within its deadline, naming the pids it could not
// reach, instead of hanging in the first bsp_sync until the link timeout. Emulated
// clusters of network namespaces (tools/cluster.sh); one test moves a host off the
// switch behind an IP router, so IP (the control plane, tcp) still reaches it and raw
// frames do not. Needs root: skipped with the reason otherwise. Runs outside Bazel's
// sandbox (no-sandbox); every cluster is torn down however a test ends.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "tests/run_program.h"

namespace {

using bsp::testing::describe;
using bsp::testing::ProgramResult;
using bsp::testing::run_program;
using bsp::testing::stats_total;
using namespace std::chrono_literals;

const std::string kBsprun = "bsplib/bsprun";
const std::string kCases = "tests/bsp_cases";

// A cluster of `hosts` namespaces for the life of the object.
class Cluster {
 public:
  Cluster(int hosts, const std::string& prefix) : prefix_(prefix) {
    ProgramResult up = run_program({"tools/cluster.sh", "up", std::to_string(hosts), "--prefix", prefix_}, 60s);
    ready_ = up.exit_code == 0;
    error_ = describe(up);
  }
  ~Cluster() { run_program({"tools/cluster.sh", "down", "--prefix", prefix_}, 60s); }
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  bool ready() const { return ready_; }
  const std::string& error() const { return error_; }
  const std::string& prefix() const { return prefix_; }

  // Takes host's switch port off the bridge and routes IP to it through the switch
  // namespace (proxy ARP keeps everyone's /24): host is now a segment of its own.
  // Returns "" or what failed.
  std::string move_behind_router(int host) {
    const std::string sw = prefix_ + "sw", port = "v" + std::to_string(host);
    const std::string address = "10.77.0." + std::to_string(host + 1);
    const std::vector<std::vector<std::string>> steps = {
        {"ip", "-n", sw, "link", "set", port, "nomaster"},
        {"ip", "-n", sw, "addr", "add", "10.77.0.254/32", "dev", "br0"},
        {"ip", "-n", sw, "addr", "add", "10.77.0.254/32", "dev", port},
        {"ip", "-n", sw, "route", "add", "10.77.0.0/24", "dev", "br0"},
        {"ip", "-n", sw, "route", "add", address + "/32", "dev", port},
        {"ip", "netns", "exec", sw, "sh", "-c",
         "echo 1 > /proc/sys/net/ipv4/ip_forward && echo 1 > /proc/sys/net/ipv4/conf/br0/proxy_arp && "
         "echo 1 > /proc/sys/net/ipv4/conf/" +
             port + "/proxy_arp"},
    };
    for (const std::vector<std::string>& step : steps) {
      ProgramResult result = run_program(step, 20s);
      if (result.exit_code != 0) return describe(result);
    }
    return "";
  }

 private:
  std::string prefix_;
  bool ready_ = false;
  std::string error_;
};

std::string unique_prefix(const char* tag) { return tag + std::to_string(::getpid() % 100000); }

#define SKIP_UNLESS_ROOT() \
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to build network namespaces and open raw sockets"
#define SKIP_UNLESS_READY(cluster) \
  if (!(cluster).ready()) GTEST_SKIP() << "could not build the namespace cluster: " << (cluster).error()

ProgramResult run_nic(const Cluster& cluster, const std::vector<std::string>& options, const std::string& program) {
  std::vector<std::string> argv = {kBsprun, "-n", "4", "--netns=" + cluster.prefix(), "--transport=nic"};
  argv.insert(argv.end(), options.begin(), options.end());
  argv.insert(argv.end(), {kCases, "--case=" + program});
  return run_program(argv, 60s);
}

TEST(NicSegmentTest, HostBehindARouterIsNamedWithinTheDeadline) {
  SKIP_UNLESS_ROOT();
  Cluster cluster(4, unique_prefix("nr"));
  SKIP_UNLESS_READY(cluster);
  ASSERT_EQ(cluster.move_behind_router(3), "");
  // IP still reaches host 3: the job starts and tcp runs.
  ProgramResult tcp = run_program(
      {kBsprun, "-n", "4", "--netns=" + cluster.prefix(), "--transport=tcp", kCases, "--case=put_all_to_all"}, 60s);
  ASSERT_EQ(tcp.exit_code, 0) << "the routed cluster does not carry IP: " << describe(tcp);
  // Raw frames do not: nic refuses at set-up, naming pid 3, rather than hanging.
  ProgramResult nic = run_nic(cluster, {"--connect-timeout-ms=2000"}, "put_all_to_all");
  EXPECT_FALSE(nic.timed_out) << describe(nic);
  EXPECT_NE(nic.exit_code, 0) << describe(nic);
  EXPECT_LT(nic.seconds, 20) << describe(nic);
  EXPECT_NE(nic.err.find("not on one Ethernet segment"), std::string::npos) << describe(nic);
  EXPECT_NE(nic.err.find("pid 3 (host"), std::string::npos) << describe(nic);
  EXPECT_NE(nic.err.find("nothing new for 2000 ms"), std::string::npos) << describe(nic);
}

// The intact clusters' cases run in tests/cluster_test.cc; here the ways a user gets the
// interface wrong on an intact one.
class IntactClusterTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (::geteuid() == 0) cluster_ = new Cluster(4, unique_prefix("ns"));
  }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
  }
  void SetUp() override {
    SKIP_UNLESS_ROOT();
    SKIP_UNLESS_READY(*cluster_);
  }
  static Cluster* cluster_;
};

Cluster* IntactClusterTest::cluster_ = nullptr;

TEST_F(IntactClusterTest, EthernetPasses) {
  ProgramResult result = run_nic(*cluster_, {}, "put_all_to_all");
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_NE(result.out.find("case put_all_to_all passed"), std::string::npos) << describe(result);
}

// lo in every namespace: one host name, so only the probes can tell.
TEST_F(IntactClusterTest, LoopbackAcrossNamespacesFailsNamingThePeers) {
  ProgramResult result = run_nic(*cluster_, {"--iface=lo", "--connect-timeout-ms=1000"}, "put_all_to_all");
  EXPECT_FALSE(result.timed_out) << describe(result);
  EXPECT_NE(result.exit_code, 0) << describe(result);
  EXPECT_LT(result.seconds, 15) << describe(result);
  EXPECT_NE(result.err.find("it never heard from pid"), std::string::npos) << describe(result);
  EXPECT_NE(result.err.find("lo reaches only processes on one host and in one network namespace"), std::string::npos)
      << describe(result);
}

// pid 0 on lo, the others on eth0: refused by the addresses alone, without waiting.
TEST_F(IntactClusterTest, LoopbackMixedWithEthernetIsRefusedAtOnce) {
  ProgramResult result = run_program(
      {kBsprun, "-n", "4", "--netns=" + cluster_->prefix(), "--transport=nic", "--connect-timeout-ms=60000", "sh", "-c",
       "if [ \"$BSP_PID\" = 0 ]; then export BSP_IFACE=lo; fi; exec \"$0\" --case=put_all_to_all", kCases},
      60s);
  EXPECT_FALSE(result.timed_out) << describe(result);
  EXPECT_NE(result.exit_code, 0) << describe(result);
  EXPECT_LT(result.seconds, 15) << describe(result);
  EXPECT_NE(result.err.find("cannot exchange raw Ethernet frames with"), std::string::npos) << describe(result);
  EXPECT_NE(result.err.find("lo has no Ethernet address"), std::string::npos) << describe(result);
  EXPECT_NE(result.err.find("--iface=NAME"), std::string::npos) << describe(result);
}

// Frames as large as the interface allows, never larger: 1500 on the cluster's ordinary
// veths, 9000 once every interface on the segment takes jumbo frames.
TEST(NicFrameSizeTest, FramesFollowTheInterfaceMtu) {
  SKIP_UNLESS_ROOT();
  Cluster cluster(2, unique_prefix("nj"));
  SKIP_UNLESS_READY(cluster);
  auto payload_per_frame = [&] {
    ProgramResult result = run_program({kBsprun, "-n", "2", "--netns=" + cluster.prefix(), "--transport=nic", "--stats",
                                        kCases, "--case=large_transfers"},
                                       60s);
    EXPECT_NE(result.out.find("case large_transfers passed"), std::string::npos) << describe(result);
    double frames = stats_total(result, "data_sent");
    return frames > 0 ? stats_total(result, "bytes_sent") / frames : 0.0;
  };
  double ethernet = payload_per_frame();
  EXPECT_GT(ethernet, 1300);
  EXPECT_LE(ethernet, 1500 - 32);  // the wire header's 32 bytes of each 1500
  const std::string sw = cluster.prefix() + "sw";
  for (const std::vector<std::string>& step :
       std::vector<std::vector<std::string>>{{"ip", "-n", cluster.prefix() + "0", "link", "set", "eth0", "mtu", "9000"},
                                             {"ip", "-n", cluster.prefix() + "1", "link", "set", "eth0", "mtu", "9000"},
                                             {"ip", "-n", sw, "link", "set", "v0", "mtu", "9000"},
                                             {"ip", "-n", sw, "link", "set", "v1", "mtu", "9000"},
                                             {"ip", "-n", sw, "link", "set", "br0", "mtu", "9000"}}) {
    ProgramResult result = run_program(step, 20s);
    ASSERT_EQ(result.exit_code, 0) << describe(result);
  }
  double jumbo = payload_per_frame();
  EXPECT_GT(jumbo, 8000);
  EXPECT_LE(jumbo, 9000 - 40);
}

}  // namespace
