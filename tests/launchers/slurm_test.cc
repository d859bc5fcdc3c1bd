// tests/launchers/slurm_test.cc: BSPlib jobs started by `srun --mpi=pmix` (and inside
// sbatch) with no bsprun, on a Slurm cluster this test makes and ends itself
// (tests/launchers/slurm_cluster.sh: munged, slurmctld and a slurmd per host, all
// configured under a temporary directory). The cluster is 4 emulated hosts
// (tools/cluster.sh: network namespaces on a bridge, a slurmd in each); if that cannot
// be built, one node on this host's loopback, saying why. Runs the semantics cases of
// tests/bsp_cases over tcp and udp with one process per host and with several (two cases
// over nic), NAS IS and EP class S, sbatch, bsp_init, srun without --mpi=pmix, and the
// failures (abort, a killed process, a killed pid 0, an abort while a process computes
// outside BSPlib): a non-zero srun status within seconds.
// Needs root; skipped with the reason when not root or when the daemons do not start.
// SLURM_TEST_HOSTS=1 in the environment (bazel test --test_env=SLURM_TEST_HOSTS=1) runs
// on one node without namespaces.
#include <gtest/gtest.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "tests/holding_cases.h"
#include "tests/run_program.h"

namespace {

using bsp::testing::absolute;
using bsp::testing::describe;
using bsp::testing::ProgramResult;
using bsp::testing::run_program;
using namespace std::chrono_literals;

const std::string kCases = absolute("tests/bsp_cases");
const std::string kPmixCases = absolute("tests/launchers/pmix_cases");
const std::string kScript = absolute("tests/launchers/slurm_cluster.sh");
const std::string kClusterScript = absolute("tools/cluster.sh");
const std::string kPrefix = "sl" + std::to_string(::getpid() % 100000);
constexpr int kHosts = 4;

std::string read_file(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// The cluster, made once for the whole program and stopped at its end (and by the
// script's watcher if this program dies first).
struct Cluster {
  std::string skip_reason;  // set: every test skips with it
  std::string dir;
  std::string conf;
  std::string netns;  // host 0's namespace, where srun runs ("" for one node here)
  int hosts = 0;
  std::string single_node_reason;  // why the emulated hosts were not used
};

Cluster& cluster() {
  static Cluster state;
  return state;
}

std::string make_directory() {
  char name[] = "/tmp/bsp-slurm.XXXXXX";  // short: munge's and PMIx's sockets live under it
  return ::mkdtemp(name) ? std::string(name) : std::string();
}

class SlurmEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    Cluster& c = cluster();
    if (::geteuid() != 0) {
      c.skip_reason = "needs root (it starts munged, slurmctld and slurmd, and network namespaces)";
      return;
    }
    if (run_program({"sh", "-c", "command -v srun && command -v sbatch && command -v slurmd && command -v munged"}, 30s)
            .exit_code != 0) {
      c.skip_reason = "Slurm (srun, sbatch, slurmd) or munge is not installed";
      return;
    }
    const std::string owner = std::to_string(::getpid());
    const char* hosts = std::getenv("SLURM_TEST_HOSTS");
    c.dir = make_directory();
    ProgramResult started;
    if (hosts && std::string(hosts) == "1") {
      started.exit_code = 3;
      started.err = "SLURM_TEST_HOSTS=1 asks for one node";
    } else {
      started = run_program({kScript, "start", c.dir, "--hosts", std::to_string(kHosts), "--prefix", kPrefix,
                             "--cluster", kClusterScript, "--owner", owner},
                            120s);
    }
    if (started.exit_code == 0) {
      c.hosts = kHosts;
      c.netns = kPrefix + "0";
    } else {
      c.single_node_reason = started.err + (started.timed_out ? " (timed out)" : "");
      std::fprintf(stderr, "slurm_test: %d emulated hosts could not be set up, running on one node: %s\n", kHosts,
                   c.single_node_reason.c_str());
      ::rmdir(c.dir.c_str());  // (the script removed it if it got that far)
      c.dir = make_directory();
      started = run_program({kScript, "start", c.dir, "--hosts", "1", "--owner", owner}, 60s);
      if (started.exit_code != 0) {
        c.skip_reason = "the Slurm cluster did not start: " + started.err + (started.timed_out ? " (timed out)" : "");
        c.dir.clear();
        return;
      }
      c.hosts = 1;
    }
    c.conf = c.dir + "/slurm.conf";
    std::fprintf(stderr, "slurm_test: %s", started.out.c_str());
  }

  void TearDown() override {
    Cluster& c = cluster();
    if (c.dir.empty()) return;
    ProgramResult stopped = run_program({kScript, "stop", c.dir}, 60s);
    EXPECT_EQ(stopped.exit_code, 0) << describe(stopped);
  }
};

const auto* const kEnvironment = ::testing::AddGlobalTestEnvironment(new SlurmEnvironment);

// `srun --mpi=pmix OPTIONS PROGRAM...` in host 0, BSP_TRANSPORT in the environment it
// exports to the tasks; -t 1 lets Slurm itself end a step this test lost.
ProgramResult srun(const std::vector<std::string>& options, const std::string& transport,
                   const std::vector<std::string>& program, const std::string& input = "",
                   std::chrono::milliseconds deadline = 60s) {
  const Cluster& c = cluster();
  std::vector<std::string> argv;
  if (!c.netns.empty()) argv = {"ip", "netns", "exec", c.netns};
  for (const char* word : {"srun", "--mpi=pmix", "-t", "1"}) argv.push_back(word);
  argv.insert(argv.end(), options.begin(), options.end());
  argv.insert(argv.end(), program.begin(), program.end());
  return run_program(argv, deadline, input, {{"SLURM_CONF", c.conf}, {"BSP_TRANSPORT", transport}});
}

// One process per host (4 on one node).
std::vector<std::string> spread(int procs) {
  const Cluster& c = cluster();
  if (c.hosts == 1) return {"-n", std::to_string(procs)};
  return {"-N", std::to_string(std::min(procs, c.hosts)), "-n", std::to_string(procs)};
}

#define SKIP_WITHOUT_CLUSTER()                                                 \
  do {                                                                         \
    if (!cluster().skip_reason.empty()) GTEST_SKIP() << cluster().skip_reason; \
  } while (0)

// ---- the semantics cases, one process per host ----
using Semantics = std::tuple<std::string, std::string>;  // transport, case

class SrunSemantics : public ::testing::TestWithParam<Semantics> {};

TEST_P(SrunSemantics, Holds) {
  SKIP_WITHOUT_CLUSTER();
  const auto& [transport, name] = GetParam();
  ProgramResult result = srun(spread(4), transport, {kCases, "--case=" + name},
                              name == "stdin_to_pid0" ? "12345\n" : "");
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_EQ(bsp::testing::count_occurrences(result.out, "case " + name + " passed"), 1) << describe(result);
}

using bsp::testing::kHoldingCases;

INSTANTIATE_TEST_SUITE_P(TcpAndUdp, SrunSemantics,
                         ::testing::Combine(::testing::Values("tcp", "udp"), ::testing::ValuesIn(kHoldingCases)),
                         [](const ::testing::TestParamInfo<Semantics>& info) {
                           return std::get<0>(info.param) + "_" + std::get<1>(info.param);
                         });

class SlurmTest : public ::testing::Test {
 protected:
  void SetUp() override { SKIP_WITHOUT_CLUSTER(); }
  // "Promptly": `idle` seconds on an idle machine, or 4 times a clean run of the same
  // shape made now (once per test), on a loaded one.
  double prompt_bound(double idle) {
    if (reference_.exit_code != 0) {
      reference_ = srun(spread(4), "udp", {kCases, "--case=put_all_to_all"});
      EXPECT_EQ(reference_.exit_code, 0) << describe(reference_);
    }
    return bsp::testing::calibrated_bound(idle, reference_, 4);
  }
  ProgramResult reference_;
};

// Several processes per host: some pairs meet on a host, others across the switch.
TEST_F(SlurmTest, SeveralProcessesPerHost) {
  const Cluster& c = cluster();
  const std::vector<std::vector<std::string>> layouts = c.hosts == 1
                                                            ? std::vector<std::vector<std::string>>{{"-n", "8"}}
                                                            : std::vector<std::vector<std::string>>{
                                                                  {"-N", "2", "-n", "4"},
                                                                  {"-N", std::to_string(c.hosts), "-n", "8"}};
  for (const std::vector<std::string>& layout : layouts) {
    for (const std::string transport : {"tcp", "udp"}) {
      for (const std::string name : {"put_all_to_all", "many_to_one"}) {
        ProgramResult result = srun(layout, transport, {kCases, "--case=" + name});
        EXPECT_EQ(result.exit_code, 0) << layout[1] << " " << transport << " " << name << "\n" << describe(result);
        EXPECT_NE(result.out.find("case " + name + " passed"), std::string::npos) << describe(result);
      }
    }
  }
}

// NAS IS and EP class S verify with the official values.
TEST_F(SlurmTest, NasClassSVerifies) {
  for (const std::string kernel : {"is", "ep"}) {
    for (const std::string transport : {"tcp", "udp"}) {
      ProgramResult result = srun(spread(4), transport, {absolute("nas/" + kernel + "/" + kernel), "--class=S"}, "",
                                  120s);
      ASSERT_EQ(result.exit_code, 0) << kernel << " " << transport << "\n" << describe(result);
      auto field = [&](const std::string& label) {
        std::size_t at = result.out.find("\n " + label);
        if (at == std::string::npos) return std::string();
        std::size_t begin = result.out.find_first_not_of(" =", result.out.find('=', at));
        return result.out.substr(begin, result.out.find('\n', begin) - begin);
      };
      EXPECT_EQ(field("Verification"), "SUCCESSFUL") << kernel << " " << transport << "\n" << result.out;
      EXPECT_EQ(field("Total processes"), "4") << result.out;
      EXPECT_EQ(field("Transport"), transport) << result.out;
    }
  }
}

// A batch job whose script calls srun.
TEST_F(SlurmTest, SbatchScriptRunsAJob) {
  const Cluster& c = cluster();
  const std::string script = c.dir + "/job.sh";
  const std::string output = c.dir + "/job.out";
  {
    std::ofstream file(script);
    file << "#!/bin/sh\nsrun --mpi=pmix " << kCases << " --case=bsmp_all_to_all\n";
  }
  std::vector<std::string> argv;
  if (!c.netns.empty()) argv = {"ip", "netns", "exec", c.netns};
  for (const char* word : {"sbatch", "--wait", "-t", "1", "-o", output.c_str()}) argv.push_back(word);
  for (const std::string& word : spread(4)) argv.push_back(word);
  argv.push_back(script);
  ProgramResult result = run_program(argv, 90s, "", {{"SLURM_CONF", c.conf}, {"BSP_TRANSPORT", "udp"}});
  std::string job_output = read_file(output);
  ASSERT_EQ(result.exit_code, 0) << describe(result) << "job output:\n" << job_output;
  EXPECT_NE(job_output.find("case bsmp_all_to_all passed"), std::string::npos) << job_output;
}

TEST_F(SlurmTest, BspInitAndFewerProcesses) {
  ProgramResult init = srun(spread(4), "tcp", {kPmixCases, "--case=spmd_init", "--expect=4"});
  EXPECT_EQ(init.exit_code, 0) << describe(init);
  EXPECT_NE(init.out.find("case spmd_init passed (4 processes)"), std::string::npos) << describe(init);
  ProgramResult fewer = srun(spread(4), "udp", {kPmixCases, "--case=fewer", "--expect=4"});
  EXPECT_EQ(fewer.exit_code, 0) << describe(fewer);
  EXPECT_NE(fewer.out.find("case fewer passed"), std::string::npos) << describe(fewer);
}

// ---- ways of failing: a non-zero srun status within seconds ----
TEST_F(SlurmTest, AbortFailsPromptlyPrintingTheMessageOnce) {
  for (const std::string transport : {"tcp", "udp"}) {
    ProgramResult result = srun(spread(4), transport, {kCases, "--case=abort_with_message"}, "", 30s);
    EXPECT_FALSE(result.timed_out) << describe(result);
    EXPECT_NE(result.exit_code, 0) << describe(result);
    EXPECT_EQ(bsp::testing::count_occurrences(result.err, "custom abort message 42 from the test"), 1)
        << describe(result);
    EXPECT_LT(result.seconds, prompt_bound(10.0)) << describe(result);
  }
}

TEST_F(SlurmTest, CrashedProcessFailsPromptly) {
  for (const std::string transport : {"tcp", "udp"}) {
    ProgramResult result = srun(spread(4), transport, {kCases, "--case=killed_process"}, "", 30s);
    EXPECT_FALSE(result.timed_out) << describe(result);
    EXPECT_NE(result.exit_code, 0) << describe(result);
    EXPECT_NE(result.err.find("pid 3"), std::string::npos) << describe(result);
    EXPECT_LT(result.seconds, prompt_bound(10.0)) << describe(result);
  }
}

// Pid 0 hosts the coordinator: the others see the control connection close and stop.
TEST_F(SlurmTest, CrashedPidZeroEndsTheOthers) {
  ProgramResult result = srun(spread(4), "udp", {kPmixCases, "--case=pid0_killed"}, "", 30s);
  EXPECT_FALSE(result.timed_out) << describe(result);
  EXPECT_NE(result.exit_code, 0) << describe(result);
  EXPECT_NE(result.err.find("the job's coordinator is gone"), std::string::npos) << describe(result);
  EXPECT_LT(result.seconds, prompt_bound(10.0)) << describe(result);
}

// A process computing outside BSPlib (60 s) does not hold the failed job up: pid 0 asks
// Slurm to end the step (PMIx_Abort).
TEST_F(SlurmTest, AbortStopsAProcessComputingOutsideBsplib) {
  ProgramResult result = srun(spread(4), "tcp", {kPmixCases, "--case=abort_while_computing"}, "", 30s);
  EXPECT_FALSE(result.timed_out) << describe(result);
  EXPECT_NE(result.exit_code, 0) << describe(result);
  EXPECT_EQ(bsp::testing::count_occurrences(result.err, "abort while pid 1 computes"), 1) << describe(result);
  EXPECT_LT(result.seconds, prompt_bound(10.0)) << describe(result);
}

// Without --mpi=pmix every task would start a job of its own: refused, saying what to do.
TEST_F(SlurmTest, SrunWithoutPmixIsReported) {
  const Cluster& c = cluster();
  std::vector<std::string> argv;
  if (!c.netns.empty()) argv = {"ip", "netns", "exec", c.netns};
  for (const char* word : {"srun", "-t", "1", "-n", "2", kCases.c_str(), "--case=put_all_to_all"}) argv.push_back(word);
  ProgramResult result = run_program(argv, 60s, "", {{"SLURM_CONF", c.conf}});
  EXPECT_NE(result.exit_code, 0) << describe(result);
  EXPECT_EQ(bsp::testing::count_occurrences(result.err, "run srun --mpi=pmix"), 1) << describe(result);
  EXPECT_EQ(result.out.find("passed"), std::string::npos) << describe(result);
}

// nic (raw Ethernet frames) across the emulated hosts, two processes per host.
TEST_F(SlurmTest, NicAcrossHosts) {
  const Cluster& c = cluster();
  std::vector<std::string> layout = c.hosts == 1 ? std::vector<std::string>{"-n", "4"}
                                                 : std::vector<std::string>{"-N", std::to_string(c.hosts), "-n",
                                                                            std::to_string(2 * c.hosts)};
  for (const std::string name : {"put_all_to_all", "many_small_puts"}) {
    ProgramResult result = srun(layout, "nic", {kCases, "--case=" + name});
    EXPECT_EQ(result.exit_code, 0) << name << "\n" << describe(result);
    EXPECT_NE(result.out.find("case " + name + " passed"), std::string::npos) << describe(result);
  }
}

// The emulated hosts were used (or the reason they were not is in the log).
TEST_F(SlurmTest, RunsAcrossHosts) {
  const Cluster& c = cluster();
  if (c.hosts == 1) GTEST_SKIP() << "one node only: " << c.single_node_reason;
  ProgramResult result = srun(spread(4), "tcp", {"hostname", "-I"});
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  for (int host = 0; host < c.hosts; ++host) {
    EXPECT_NE(result.out.find("10.77.0." + std::to_string(host + 1)), std::string::npos) << describe(result);
  }
}

}  // namespace
