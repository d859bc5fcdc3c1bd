// tests/launch/ssh_cluster_test.cc: jobs across hosts through ssh. An emulated cluster of
// 4 hosts (tools/cluster.sh: network namespaces on a bridge), each running its own sshd
// with keys made for the test under its temporary directory; bsprun runs inside host 0
// with --hostfile (2 slots per host: 8 processes) and --rsh="ssh -F <the test's config>".
// The semantics cases and NAS CG class S run on tcp, udp and nic; a killed remote process,
// a cut host link, a dropped ssh session and Ctrl-C stop the job naming the pid and host
// and leave nothing behind. Open MPI's mpirun, started in host 0 with the same hostfile
// and its orted daemons started through the same ssh, runs the semantics cases with no
// bsprun (PMIx), and a killed remote process ends it. Needs root (namespaces, sshd): skipped with the reason
// otherwise. Runs outside Bazel's sandbox (no-sandbox).
#include <gtest/gtest.h>
#include <signal.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "tests/run_program.h"

extern char** environ;

namespace {

using bsp::testing::calibrated_bound;
using bsp::testing::describe;
using bsp::testing::ProgramResult;
using bsp::testing::run_program;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

const std::string kBsprun = "bsplib/bsprun";
const std::string kCases = "tests/bsp_cases";
const std::string kPrefix = "sc" + std::to_string(::getpid() % 100000);

std::string temporary_directory() {
  const char* base = std::getenv("TEST_TMPDIR");
  std::string dir = std::string(base ? base : "/tmp") + "/ssh_cluster_" + std::to_string(::getpid());
  return dir;
}

std::string read_file(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// The OS pids of processes in host namespace `ns` whose program name (argv[0]; with
// whole_line, the whole command line) contains `needle`.
std::vector<int> processes_in(const std::string& ns, const std::string& needle, bool whole_line = false) {
  ProgramResult pids = run_program({"ip", "netns", "pids", ns}, 10s);
  std::vector<int> found;
  std::stringstream lines(pids.out);
  int pid;
  while (lines >> pid) {
    std::string cmdline = read_file("/proc/" + std::to_string(pid) + "/cmdline");
    if (!whole_line) cmdline = cmdline.substr(0, cmdline.find('\0'));
    for (char& c : cmdline) c = c == '\0' ? ' ' : c;
    if (cmdline.find(needle) != std::string::npos) found.push_back(pid);
  }
  return found;
}

// The start of pid's line in bsprun's --stats report.
std::string fmt_pid(int pid) {
  std::string text = "  pid " + std::to_string(pid);
  return text +
         std::string(static_cast<std::size_t>(std::max(0, 4 - static_cast<int>(std::to_string(pid).size()))), ' ');
}

// A job run in the background, in its own process group, its output in files.
class BackgroundJob {
 public:
  explicit BackgroundJob(const std::vector<std::string>& argv) {
    out_ = temporary_directory() + "/job" + std::to_string(++count_) + ".out";
    err_ = out_ + ".err";
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&actions, 2, err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attributes, 0);
    std::vector<char*> args;
    for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    if (posix_spawnp(&pid_, args[0], &actions, &attributes, args.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
  }
  ~BackgroundJob() {
    if (pid_ > 0 && !ended_) {
      ::kill(-pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  // Waits up to `limit` for the job to end; its exit status, or -1 if it did not end.
  int wait(std::chrono::milliseconds limit) {
    auto deadline = Clock::now() + limit;
    while (Clock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        ended_ = true;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(10ms);
    }
    return -1;
  }
  void signal_group(int signal) { ::kill(-pid_, signal); }
  std::string out() const { return read_file(out_); }
  std::string err() const { return read_file(err_); }
  bool started() const { return pid_ > 0; }

 private:
  static inline int count_ = 0;
  pid_t pid_ = -1;
  bool ended_ = false;
  std::string out_, err_;
};

class SshCluster : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (::geteuid() != 0) return;
    dir_ = temporary_directory();
    ProgramResult up = run_program(
        {"tools/cluster.sh", "up", "4", "--prefix", kPrefix, "--sshd", dir_ + "/ssh", "--slots", "2"}, 120s);
    ready_ = up.exit_code == 0;
    setup_error_ = up.err + up.out;
  }
  static void TearDownTestSuite() {
    if (::geteuid() == 0) run_program({"tools/cluster.sh", "down", "--prefix", kPrefix}, 60s);
  }
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to build network namespaces and run sshd";
    if (!ready_) GTEST_SKIP() << "could not build the cluster with an sshd per host: " << setup_error_;
  }
  // bsprun inside host 0 over the 4 hosts' 8 slots (or `hostfile`), then the program.
  static std::vector<std::string> bsprun(const std::string& transport, const std::vector<std::string>& program,
                                         const std::string& hostfile = "") {
    std::vector<std::string> argv = {"ip",
                                     "netns",
                                     "exec",
                                     kPrefix + "0",
                                     kBsprun,
                                     "-n",
                                     "8",
                                     "--hostfile=" + (hostfile.empty() ? dir_ + "/ssh/hostfile" : hostfile),
                                     "--rsh=ssh -F " + dir_ + "/ssh/ssh_config",
                                     "--transport=" + transport};
    argv.insert(argv.end(), program.begin(), program.end());
    return argv;
  }
  // mpirun inside host 0 over the same 8 slots, its daemons started through the test's
  // ssh, its own traffic on the cluster's network; the transport passed with -x.
  static ProgramResult mpirun(const std::string& transport, const std::vector<std::string>& program,
                              std::chrono::milliseconds deadline) {
    std::vector<std::string> argv = {
        "ip", "netns", "exec",       kPrefix + "0",          "mpirun", "--allow-run-as-root",
        "-n", "8",     "--hostfile", dir_ + "/ssh/hostfile", "-x",     "BSP_TRANSPORT"};
    argv.insert(argv.end(), program.begin(), program.end());
    return run_program(argv, deadline, "",
                       {{"BSP_TRANSPORT", transport},
                        {"OMPI_MCA_plm_rsh_agent", "ssh -F " + dir_ + "/ssh/ssh_config"},
                        {"OMPI_MCA_oob_tcp_if_include", "10.77.0.0/24"},
                        {"OMPI_MCA_btl_tcp_if_include", "10.77.0.0/24"}});
  }
  static bool mpirun_installed() {
    static const bool installed = run_program({"mpirun", "--version"}, 30s).exit_code == 0;
    return installed;
  }
  static bool ready_;
  static std::string setup_error_;
  static std::string dir_;
};

bool SshCluster::ready_ = false;
std::string SshCluster::setup_error_;
std::string SshCluster::dir_;

class SshClusterTransports : public SshCluster, public ::testing::WithParamInterface<std::string> {
 protected:
  void SetUp() override {
    SshCluster::SetUp();
    if (IsSkipped()) return;
    if (!bsp::testing::transport_usable(kBsprun, GetParam()))
      GTEST_SKIP() << "transport " << GetParam() << " is not built in";
  }
};

TEST_P(SshClusterTransports, SemanticsHoldOverFourHostsTimesTwo) {
  for (const char* name : {"put_all_to_all", "get_before_put", "bsmp_all_to_all", "many_supersteps", "large_transfers",
                           "many_small_puts", "registration_order_and_pop"}) {
    ProgramResult result = run_program(bsprun(GetParam(), {kCases, std::string("--case=") + name}), 120s);
    ASSERT_EQ(result.exit_code, 0) << name << "\n" << describe(result);
    EXPECT_NE(result.out.find(std::string("case ") + name + " passed"), std::string::npos) << describe(result);
  }
}

TEST_P(SshClusterTransports, NasCgClassSVerifies) {
  ProgramResult result = run_program(bsprun(GetParam(), {"nas/cg/cg", "--class=S"}), 300s);
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_NE(result.out.find("SUCCESSFUL"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("Total processes"), std::string::npos) << result.out;
}

// Open MPI's mpirun places 2 processes on each host (its daemons reach them through ssh);
// the job runs with no bsprun, the processes meeting through PMIx.
TEST_P(SshClusterTransports, MpirunRunsTheSemanticsAcrossTheHosts) {
  if (!mpirun_installed()) GTEST_SKIP() << "mpirun (Open MPI) is not installed";
  ProgramResult hosts = mpirun(GetParam(), {"hostname"}, 60s);
  ASSERT_EQ(hosts.exit_code, 0) << describe(hosts);
  for (int host = 1; host < 4; ++host) {  // host 0 shares the machine's host name
    std::string name = kPrefix + std::to_string(host);
    EXPECT_EQ(bsp::testing::count_occurrences(hosts.out, name + "\n"), 2) << name << "\n" << hosts.out;
  }
  for (const char* name : {"put_all_to_all", "get_before_put", "bsmp_all_to_all", "many_supersteps"}) {
    ProgramResult result = mpirun(GetParam(), {kCases, std::string("--case=") + name}, 120s);
    ASSERT_EQ(result.exit_code, 0) << name << "\n" << describe(result);
    EXPECT_NE(result.out.find(std::string("case ") + name + " passed"), std::string::npos) << describe(result);
  }
}

INSTANTIATE_TEST_SUITE_P(Transports, SshClusterTransports,
                         ::testing::Values("tcp", "udp", "nic", "shm+tcp", "shm+udp", "shm+nic"));

// A hybrid transport takes shared memory to the other process of its host and the
// network to the six elsewhere; --stats says so per process.
TEST_F(SshCluster, HybridTakesSharedMemoryWithinAHostAndTheNetworkBetween) {
  std::vector<std::string> argv = bsprun("shm+udp", {kCases, "--case=put_all_to_all"});
  argv.insert(argv.begin() + 5, "--stats");
  ProgramResult result = run_program(argv, 60s);
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  for (int pid = 0; pid < 8; ++pid) {
    const std::string partner = std::to_string(pid ^ 1);
    std::string line = result.err.substr(result.err.find(fmt_pid(pid)));
    line = line.substr(0, line.find('\n'));
    EXPECT_NE(line.find("shm_peers=1 net_peers=6 shm:" + partner + " udp:"), std::string::npos) << line;
  }
}

// Superstep lines in hybrid jobs: each process reaches its host's other process through
// shared memory, where a small superstep travels in one cache line, and the six elsewhere
// through the network, in the same supersteps. Small-superstep programs (empty syncs,
// 4-byte puts, small messages, a mix that overflows a line, a line's staged token, tag
// size changes) hold over shm+tcp and shm+udp with lines on and off; with lines on, an
// empty superstep costs each process a frame to each of its six network peers and none
// to its partner (--stats: 500 empty supersteps send 6 x 500 frames and a few more,
// against 7 x 500 with lines off).
TEST_F(SshCluster, HybridSmallSuperstepsWithLinesOnAndOff) {
  for (const char* transport : {"shm+tcp", "shm+udp"}) {
    for (const char* lines : {"1", "0"}) {
      for (const char* name : {"empty_supersteps", "small_supersteps_to_every_peer", "lines_and_frames",
                               "many_supersteps", "tagsize_states", "bsmp_all_to_all"}) {
        std::vector<std::string> argv = bsprun(transport, {kCases, std::string("--case=") + name});
        argv.insert(argv.begin() + 5, {"--stats", std::string("--superstep-lines=") + lines});
        ProgramResult result = run_program(argv, 120s);
        ASSERT_EQ(result.exit_code, 0) << transport << " lines " << lines << " " << name << "\n" << describe(result);
        EXPECT_NE(result.out.find(std::string("case ") + name + " passed"), std::string::npos) << describe(result);
        if (std::string(name) != "empty_supersteps") continue;
        std::vector<long> frames = bsp::testing::stats_per_process(result, "data_sent");
        ASSERT_EQ(frames.size(), 8u) << describe(result);
        for (long sent : frames) {
          if (std::string(lines) == "1") {
            EXPECT_GE(sent, 6 * 500) << transport << " lines on\n" << describe(result);
            EXPECT_LT(sent, 6 * 500 + 50) << transport << " lines on\n" << describe(result);
          } else {
            EXPECT_GE(sent, 7 * 500) << transport << " lines off\n" << describe(result);
          }
        }
      }
    }
  }
}

// pid 0 on a remote host (the hostfile lists host 1 first): bsprun's standard input
// reaches it through the agent, and its output comes back.
TEST_F(SshCluster, StdinReachesARemotePidZero) {
  const std::string hostfile = dir_ + "/remote_first";
  std::ofstream(hostfile) << "# pid 0 on host 1\n10.77.0.2 slots=2\n\n10.77.0.1 slots=2   # bsprun's own host\n"
                          << "10.77.0.3 slots=4\n";
  ProgramResult result = run_program(bsprun("tcp", {kCases, "--case=stdin_to_pid0"}, hostfile), 60s, "12345\n");
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_NE(result.out.find("case stdin_to_pid0 passed"), std::string::npos) << describe(result);
}

TEST_F(SshCluster, TagOutputPrefixesEveryLineWithItsPid) {
  std::vector<std::string> argv = bsprun("udp", {kCases, "--case=put_all_to_all"});
  argv.insert(argv.begin() + 5, "--tag-output");
  ProgramResult result = run_program(argv, 60s);
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_NE(result.out.find("[0] case put_all_to_all passed"), std::string::npos) << describe(result);
}

TEST_F(SshCluster, KilledRemoteProcessStopsTheJobNamingPidAndHost) {
  // The reference: a clean job of the same shape, now (ssh sessions to three hosts).
  ProgramResult reference = run_program(bsprun("udp", {kCases, "--case=put_all_to_all"}), 60s);
  ASSERT_EQ(reference.exit_code, 0) << describe(reference);
  // killed_process: the last pid (7, on host 10.77.0.4) kills itself in superstep 1.
  ProgramResult result = run_program(bsprun("udp", {kCases, "--case=killed_process"}), 60s);
  EXPECT_NE(result.exit_code, 0) << describe(result);
  EXPECT_FALSE(result.timed_out);
  EXPECT_NE(result.err.find("pid 7 on host 10.77.0.4"), std::string::npos) << describe(result);
  EXPECT_NE(result.err.find("signal 9"), std::string::npos) << describe(result);
  EXPECT_LT(result.seconds, calibrated_bound(5.0, reference, 4)) << describe(result);
}

// A process on another host that fails in bsp_begin's set-up (here a bad setting only
// it sees) is named with its host, as failing in set-up, not as a program that never
// called bsp_begin: its agent relays the start pipe with the exit.
TEST_F(SshCluster, RemoteSetUpFailureIsNamedWithItsHost) {
  ProgramResult result = run_program(
      bsprun("udp", {"sh", "-c",
                     "if [ \"$BSP_PID\" = 5 ]; then exec env BSP_SPIN_US=bogus \"$0\" \"$1\"; fi; "
                     "exec \"$0\" \"$1\"",
                     kCases, "--case=put_all_to_all"}),
      60s);
  EXPECT_FALSE(result.timed_out) << describe(result);
  EXPECT_NE(result.exit_code, 0) << describe(result);
  EXPECT_NE(result.err.find("BSP_SPIN_US=bogus"), std::string::npos) << describe(result);
  EXPECT_NE(result.err.find("pid 5 on host 10.77.0.3"), std::string::npos) << describe(result);
  EXPECT_NE(result.err.find("failed during set-up (exited with status 1"), std::string::npos) << describe(result);
  EXPECT_EQ(result.err.find("without calling bsp_begin"), std::string::npos) << describe(result);
}

// Under mpirun the job ends non-zero within seconds, the killed pid named.
TEST_F(SshCluster, MpirunKilledRemoteProcessEndsTheJob) {
  if (!mpirun_installed()) GTEST_SKIP() << "mpirun (Open MPI) is not installed";
  ProgramResult reference = mpirun("udp", {kCases, "--case=put_all_to_all"}, 60s);
  ASSERT_EQ(reference.exit_code, 0) << describe(reference);
  ProgramResult result = mpirun("udp", {kCases, "--case=killed_process"}, 60s);
  EXPECT_FALSE(result.timed_out) << describe(result);
  EXPECT_NE(result.exit_code, 0) << describe(result);
  EXPECT_NE(result.err.find("pid 7"), std::string::npos) << describe(result);
  // Within seconds: 5 on an idle machine (a clean run takes about 2), else a multiple of
  // a clean run's time now.
  EXPECT_LT(result.seconds, calibrated_bound(5.0, reference, 4)) << describe(result);
}

TEST_F(SshCluster, CutHostLinkStopsTheJobWithinASecond) {
  BackgroundJob job(bsprun("udp", {kCases, "--case=sync_until_stopped"}));
  ASSERT_TRUE(job.started());
  std::this_thread::sleep_for(2s);  // running on every host
  ASSERT_EQ(job.wait(0ms), -1) << job.err();
  auto cut = Clock::now();
  run_program({"ip", "-n", kPrefix + "2", "link", "set", "eth0", "down"}, 10s);
  int status = job.wait(20s);
  double seconds = std::chrono::duration<double>(Clock::now() - cut).count();
  run_program({"ip", "-n", kPrefix + "2", "link", "set", "eth0", "up"}, 10s);
  ASSERT_NE(status, -1) << "the job did not stop after host 2's link was cut\n" << job.err();
  EXPECT_NE(status, 0);
  EXPECT_NE(job.err().find("host 10.77.0.3 stopped answering"), std::string::npos) << job.err();
  EXPECT_NE(job.err().find("pids 4, 5"), std::string::npos) << job.err();
  // The message comes 0.6-0.7 s after the cut; the rest is the others leaving.
  EXPECT_LT(seconds, 3.0) << job.err();
  // The cut host's agent kills its processes when bsprun falls silent (3 s).
  std::this_thread::sleep_for(4s);
  EXPECT_TRUE(processes_in(kPrefix + "2", "bsp_cases").empty());
}

TEST_F(SshCluster, DroppedSshSessionStopsTheJobNamingTheHost) {
  BackgroundJob job(bsprun("tcp", {kCases, "--case=sync_until_stopped"}));
  ASSERT_TRUE(job.started());
  std::this_thread::sleep_for(2s);
  std::vector<int> sshd_sessions = processes_in(kPrefix + "3", "sshd: root");
  ASSERT_FALSE(sshd_sessions.empty()) << "no ssh session on host 3";
  for (int pid : sshd_sessions) ::kill(pid, SIGKILL);
  int status = job.wait(20s);
  ASSERT_NE(status, -1) << "the job did not stop after host 3's ssh session dropped\n" << job.err();
  EXPECT_NE(status, 0);
  EXPECT_NE(job.err().find("host 10.77.0.4"), std::string::npos) << job.err();
  EXPECT_NE(job.err().find("pids 6, 7"), std::string::npos) << job.err();
}

TEST_F(SshCluster, CtrlCLeavesNoProcessOnAnyHost) {
  BackgroundJob job(bsprun("udp", {kCases, "--case=sync_until_stopped"}));
  ASSERT_TRUE(job.started());
  std::this_thread::sleep_for(2s);
  for (int host = 0; host < 4; ++host) {
    ASSERT_EQ(processes_in(kPrefix + std::to_string(host), "bsp_cases").size(), 2u) << "host " << host;
  }
  job.signal_group(SIGINT);  // what the terminal does on Ctrl-C
  EXPECT_NE(job.wait(10s), -1);
  std::vector<int> left;
  for (int wait = 0; wait < 30; ++wait) {  // up to 3 s for remote agents to clean up
    left.clear();
    for (int host = 0; host < 4; ++host) {
      for (int pid : processes_in(kPrefix + std::to_string(host), "bsp_cases")) left.push_back(pid);
      for (int pid : processes_in(kPrefix + std::to_string(host), " --agent", true)) left.push_back(pid);
    }
    if (left.empty()) break;
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_TRUE(left.empty()) << left.size() << " processes left behind";
}

}  // namespace
