// tests/xdp_test.cc: the xdp transport (AF_XDP socket + our XDP program) on an emulated
// cluster of 4 hosts (tools/cluster.sh: namespaces, veth, a bridge), one process per
// host: the semantics cases and the conformance programs across hosts, loss recovered by
// the reliable layer under injected faults, a nic job sharing the interfaces with a
// running xdp job (our program passes frames that are not ours), a second xdp job on the
// same interfaces refused with a message saying what to use, and no program of ours left
// on any interface after a job ends, after one of its processes is SIGKILLed, and after
// the whole job is SIGKILLed; and without privileges a message naming the error and what
// to use instead. Needs root: skipped with the reason otherwise. Runs outside
// Bazel's sandbox (no-sandbox); the cluster is torn down however the tests end.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
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
const std::string kPrefix = "bx" + std::to_string(::getpid() % 100000);
constexpr int kHosts = 4;

// Whether host's eth0 carries an XDP program (ours are the only ones on these hosts).
bool carries_program(int host) {
  ProgramResult link = run_program({"ip", "-n", kPrefix + std::to_string(host), "-d", "link", "show", "eth0"}, 10s);
  return link.out.find("prog/xdp") != std::string::npos;
}

bool carries_program_on_lo() {
  ProgramResult link = run_program({"ip", "link", "show", "lo"}, 10s);
  return link.out.find("prog/xdp") != std::string::npos;
}

std::string programs_left() {
  std::string left;
  for (int host = 0; host < kHosts; ++host) {
    if (carries_program(host)) left += " " + kPrefix + std::to_string(host);
  }
  return left;
}

// Waits (polling the interfaces) until no host carries a program, at most `bound`.
std::string wait_for_no_programs(std::chrono::milliseconds bound) {
  auto deadline = std::chrono::steady_clock::now() + bound;
  std::string left = programs_left();
  while (!left.empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
    left = programs_left();
  }
  return left;
}

// A job in the background, in a process group of its own, output to a file.
class BackgroundJob {
 public:
  explicit BackgroundJob(const std::vector<std::string>& argv) {
    output_ = ::testing::TempDir() + "/xdp_background_" + std::to_string(::getpid()) + ".log";
    pid_ = ::fork();
    if (pid_ == 0) {
      ::setpgid(0, 0);
      int fd = ::open(output_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      std::vector<char*> args;
      for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
      args.push_back(nullptr);
      ::execv(args[0], args.data());
      ::_exit(127);
    }
    ::setpgid(pid_, pid_);
  }
  ~BackgroundJob() { kill(SIGKILL); }
  // Signals the whole group (bsprun and its processes) and reaps bsprun.
  void kill(int signal) {
    if (pid_ <= 0) return;
    ::kill(-pid_, signal);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
  }

 private:
  pid_t pid_ = -1;
  std::string output_;
};

class XdpTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (::geteuid() != 0) return;
    ProgramResult up = run_program({"tools/cluster.sh", "up", std::to_string(kHosts), "--prefix", kPrefix}, 60s);
    ready_ = up.exit_code == 0;
    setup_error_ = describe(up);
  }
  static void TearDownTestSuite() {
    if (::geteuid() == 0) run_program({"tools/cluster.sh", "down", "--prefix", kPrefix}, 60s);
  }
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to build network namespaces and attach XDP programs";
    if (!ready_) GTEST_SKIP() << "could not build the namespace cluster: " << setup_error_;
  }
  static ProgramResult run_xdp(int processes, const std::vector<std::string>& options, const std::string& name,
                               const std::string& transport = "xdp") {
    std::vector<std::string> argv = {
        kBsprun, "-n", std::to_string(processes), "--netns=" + kPrefix, "--transport=" + transport, "--stats"};
    argv.insert(argv.end(), options.begin(), options.end());
    argv.push_back(kCases);
    argv.push_back("--case=" + name);
    return run_program(argv, 120s);
  }
  static bool ready_;
  static std::string setup_error_;
};

bool XdpTest::ready_ = false;
std::string XdpTest::setup_error_;

// The cases cluster_test runs over tcp, udp and nic, over xdp; each says which XDP and
// UMEM mode it ran in, and leaves no program behind.
TEST_F(XdpTest, SemanticsAcrossHosts) {
  for (const char* name : {"put_all_to_all", "get_before_put", "bsmp_all_to_all", "many_supersteps", "large_transfers",
                           "many_small_puts", "strided_puts", "zero_length"}) {
    ProgramResult result = run_xdp(kHosts, {}, name);
    ASSERT_EQ(result.exit_code, 0) << name << ": " << describe(result);
    EXPECT_NE(result.out.find(std::string("case ") + name + " passed"), std::string::npos) << describe(result);
    // On veth auto runs XDP generically (faster there) without busy polling; AF_XDP copies.
    EXPECT_EQ(bsp::testing::count_occurrences(result.err, "xdp:eth0,skb(auto:veth),copy,no_busy_poll"), kHosts)
        << describe(result);
    EXPECT_EQ(programs_left(), "") << "after " << name;
  }
}

// The BSPlib 1998 conformance programs (tests/conformance) across the 4 hosts, launched
// by bsprun, and with bsp_begin asking for fewer processes than launched.
TEST_F(XdpTest, ConformanceAcrossHosts) {
  // Every program that must pass (tests/conformance/programs.bzl), oxford_header last.
  const char* programs[] = {
#include "tests/conformance/positive_programs.inc"
  };
  for (const char* program : programs) {
    const std::string binary = std::string("tests/conformance/") + program;
    for (const char* ask : {"", "--ask=2"}) {
      std::vector<std::string> argv = {kBsprun,           "-n",   std::to_string(kHosts), "--netns=" + kPrefix,
                                       "--transport=xdp", binary, "--mode=launched"};
      if (*ask) argv.push_back(ask);
      ProgramResult result = run_program(argv, 60s);
      EXPECT_EQ(result.exit_code, 0) << program << " " << ask << ": " << describe(result);
      EXPECT_EQ(bsp::testing::count_occurrences(result.out, std::string("conformance ") + program + " passed\n"), 1)
          << program << " " << ask << ": " << describe(result);
    }
  }
  EXPECT_EQ(programs_left(), "");
}

// Frames dropped, duplicated, reordered and corrupted on the sending side: the reliable
// layer above recovers them as over nic.
TEST_F(XdpTest, FaultsRecoveredByTheReliableLayer) {
  for (const char* name : {"put_all_to_all", "large_transfers"}) {
    ProgramResult result = run_xdp(kHosts, {"--fault=drop=0.1,dup=0.02,reorder=0.03,corrupt=0.001,seed=11"}, name);
    ASSERT_EQ(result.exit_code, 0) << name << ": " << describe(result);
    EXPECT_NE(result.out.find(std::string("case ") + name + " passed"), std::string::npos) << describe(result);
    EXPECT_GT(stats_total(result, "retransmissions"), 0) << describe(result);
    EXPECT_GT(stats_total(result, "fault_dropped"), 0) << describe(result);
  }
}

// One process of the job SIGKILLs itself: the job fails, and its reaper takes the
// program off that host's interface (the survivors detach their own as they stop).
TEST_F(XdpTest, NoProgramLeftAfterAProcessIsKilled) {
  ProgramResult result = run_xdp(2, {}, "killed_process");
  EXPECT_NE(result.exit_code, 0) << describe(result);
  EXPECT_EQ(wait_for_no_programs(10s), "") << describe(result);
}

// A long xdp job on hosts 0 and 1; meanwhile a nic job on all four hosts passes (its
// frames have our EtherType and MACs but another job id: our program passes them to the
// kernel), and a second xdp job is refused at once, saying why and what to use. Then the
// first job is SIGKILLed whole, launcher included: no program stays on any interface.
TEST_F(XdpTest, SharedInterfacesAndCleanupAfterSigkill) {
  ASSERT_EQ(wait_for_no_programs(10s), "") << "programs left by an earlier test";
  BackgroundJob running(
      {kBsprun, "-n", "2", "--netns=" + kPrefix, "--transport=xdp", kCases, "--case=sync_until_stopped"});
  auto deadline = std::chrono::steady_clock::now() + 30s;
  while (!(carries_program(0) && carries_program(1)) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_TRUE(carries_program(0) && carries_program(1)) << "the background xdp job never attached";

  ProgramResult nic = run_xdp(kHosts, {}, "put_all_to_all", "nic");
  EXPECT_EQ(nic.exit_code, 0) << describe(nic);
  EXPECT_NE(nic.out.find("case put_all_to_all passed"), std::string::npos) << describe(nic);

  ProgramResult second = run_xdp(2, {}, "put_all_to_all");
  EXPECT_NE(second.exit_code, 0) << describe(second);
  EXPECT_NE(second.err.find("eth0 already carries an XDP program"), std::string::npos) << describe(second);
  EXPECT_NE(second.err.find("--transport=nic or shm+nic"), std::string::npos) << describe(second);
  EXPECT_TRUE(carries_program(0) && carries_program(1)) << "the refused job took the running job's program off";

  running.kill(SIGKILL);
  EXPECT_EQ(wait_for_no_programs(10s), "");
}

// The processes living in a host's namespace (zombies left out) named `name`, or all.
std::vector<pid_t> processes(int host, const std::string& name = "") {
  ProgramResult pids = run_program({"ip", "netns", "pids", kPrefix + std::to_string(host)}, 10s);
  std::vector<pid_t> found;
  std::size_t at = 0;
  while (at < pids.out.size()) {
    std::size_t end = pids.out.find('\n', at);
    if (end == std::string::npos) end = pids.out.size();
    std::string line = pids.out.substr(at, end - at);
    at = end + 1;
    if (line.empty()) continue;
    ProgramResult stat = run_program({"cat", "/proc/" + line + "/stat"}, 10s);
    std::size_t open = stat.out.find('('), close = stat.out.rfind(')');
    if (open == std::string::npos || close == std::string::npos || close + 2 >= stat.out.size()) continue;
    if (stat.out[close + 2] == 'Z') continue;
    if (name.empty() || stat.out.substr(open + 1, close - open - 1) == name) {
      found.push_back(static_cast<pid_t>(std::stol(line)));
    }
  }
  return found;
}

std::vector<pid_t> reapers(int host) { return processes(host, "bsp-xdp-reaper"); }

// Without privileges (root's capabilities dropped), set-up stops at once naming the
// interface and the error, and saying what to use instead.
TEST(XdpPrivilegeTest, RefusedWithoutCapabilitiesSaysWhatToUse) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root, to drop its capabilities";
  if (::access("/usr/bin/setpriv", X_OK) != 0) GTEST_SKIP() << "setpriv (util-linux) is missing";
  ProgramResult result = run_program({"/usr/bin/setpriv", "--bounding-set=-all", "--inh-caps=-all", kBsprun, "-n", "1",
                                      "--transport=xdp", kCases, "--case=enquiry"},
                                     60s);
  EXPECT_NE(result.exit_code, 0) << describe(result);
  EXPECT_NE(result.err.find("cannot attach the XDP program to lo"), std::string::npos) << describe(result);
  EXPECT_NE(result.err.find("Operation not permitted"), std::string::npos) << describe(result);
  EXPECT_NE(result.err.find("--transport=udp"), std::string::npos) << describe(result);
  EXPECT_FALSE(carries_program_on_lo());
}

// Should the reaper die with the job (both SIGKILLed), the programs stay until the next
// xdp process attaches on the interface: it detaches those whose owner is gone, and runs.
TEST_F(XdpTest, StaleProgramsSweptByTheNextJob) {
  ASSERT_EQ(wait_for_no_programs(10s), "") << "programs left by an earlier test";
  BackgroundJob running(
      {kBsprun, "-n", "2", "--netns=" + kPrefix, "--transport=xdp", kCases, "--case=sync_until_stopped"});
  auto deadline = std::chrono::steady_clock::now() + 30s;
  std::vector<pid_t> found;
  while (std::chrono::steady_clock::now() < deadline) {
    found = reapers(0);
    std::vector<pid_t> more = reapers(1);
    if (!found.empty() && !more.empty()) {
      found.insert(found.end(), more.begin(), more.end());
      break;
    }
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_EQ(found.size(), 2u) << "no reaper on hosts 0 and 1";
  for (pid_t reaper : found) ::kill(reaper, SIGKILL);
  running.kill(SIGKILL);
  // The killed processes may take a moment to run their exit: until then they own their
  // programs (a new job would rightly be refused).
  deadline = std::chrono::steady_clock::now() + 10s;
  while ((!processes(0).empty() || !processes(1).empty()) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_TRUE(carries_program(0) && carries_program(1)) << "with no reaper, the programs should still be there";
  ProgramResult next = run_xdp(2, {}, "put_all_to_all");
  EXPECT_EQ(next.exit_code, 0) << describe(next);
  EXPECT_EQ(wait_for_no_programs(10s), "");
}

}  // namespace
