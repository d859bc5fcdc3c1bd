// tests/launchers/mpirun_test.cc: BSPlib jobs started by Open MPI's mpirun (PMIx) with no
// bsprun: the semantics cases of tests/bsp_cases over tcp and udp on 4 processes (one
// over nic), the ways of starting (bsp_init, bsp_begin asking for fewer, 1 and 8
// processes), and the ways of failing (bsp_abort, a killed process, a killed pid 0 that hosts the coordinator, an
// abort while a process computes outside BSPlib): a non-zero exit within seconds, never a
// hang. Skipped when mpirun is not installed.
#include <gtest/gtest.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <map>
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

bool mpirun_installed() {
  static const bool installed = run_program({"mpirun", "--version"}, 30s).exit_code == 0;
  return installed;
}

// mpirun -n procs, as root, oversubscribing the 2 cores, the transport passed with -x;
// its own out-of-band traffic kept on loopback.
ProgramResult mpirun(int procs, const std::string& transport, const std::vector<std::string>& program,
                     const std::string& input = "", std::chrono::milliseconds deadline = 60s) {
  std::vector<std::string> argv = {"mpirun", "--allow-run-as-root", "--oversubscribe", "-n", std::to_string(procs),
                                   "-x",     "BSP_TRANSPORT"};
  argv.insert(argv.end(), program.begin(), program.end());
  std::map<std::string, std::string> environment = {
      {"BSP_TRANSPORT", transport},
      {"OMPI_MCA_oob_tcp_if_include", "lo"},
      {"OMPI_MCA_btl_tcp_if_include", "lo"},
      {"OMPI_MCA_plm", "isolated"},  // this host only: never an ssh
  };
  return run_program(argv, deadline, input, environment);
}

class MpirunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!mpirun_installed()) GTEST_SKIP() << "mpirun (Open MPI) is not installed";
  }
  // "Promptly": `idle` seconds on an idle machine, or 4 times a clean run of the same
  // shape made now (once per test), on a loaded one.
  double prompt_bound(double idle) {
    if (reference_.exit_code != 0) {
      reference_ = mpirun(4, "udp", {kCases, "--case=put_all_to_all"});
      EXPECT_EQ(reference_.exit_code, 0) << describe(reference_);
    }
    return bsp::testing::calibrated_bound(idle, reference_, 4);
  }
  ProgramResult reference_;
};

// ---- the semantics cases ----
using Semantics = std::tuple<std::string, std::string>;  // transport, case

class MpirunSemantics : public ::testing::TestWithParam<Semantics> {};

TEST_P(MpirunSemantics, Holds) {
  if (!mpirun_installed()) GTEST_SKIP() << "mpirun (Open MPI) is not installed";
  const auto& [transport, name] = GetParam();
  ProgramResult result = mpirun(4, transport, {kCases, "--case=" + name}, name == "stdin_to_pid0" ? "12345\n" : "");
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_EQ(bsp::testing::count_occurrences(result.out, "case " + name + " passed"), 1) << describe(result);
}

using bsp::testing::kHoldingCases;

INSTANTIATE_TEST_SUITE_P(TcpAndUdp, MpirunSemantics,
                         ::testing::Combine(::testing::Values("tcp", "udp"), ::testing::ValuesIn(kHoldingCases)),
                         [](const ::testing::TestParamInfo<Semantics>& info) {
                           return std::get<0>(info.param) + "_" + std::get<1>(info.param);
                         });

// ---- ways of starting ----
TEST_F(MpirunTest, BspInitSendsTheOthersIntoTheSpmdFunction) {
  ProgramResult result = mpirun(4, "tcp", {kPmixCases, "--case=spmd_init", "--expect=4"});
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_NE(result.out.find("case spmd_init passed (4 processes)"), std::string::npos) << describe(result);
}

TEST_F(MpirunTest, BeginAsksForFewerThanLaunched) {
  ProgramResult result = mpirun(4, "udp", {kPmixCases, "--case=fewer", "--expect=4"});
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_NE(result.out.find("case fewer passed"), std::string::npos) << describe(result);
}

// More than mpirun started: stopped with a message naming the counts and the launcher's
// own -n (there is no bsprun to name).
TEST_F(MpirunTest, BeginAsksForMoreThanLaunched) {
  ProgramResult result = mpirun(4, "tcp", {kPmixCases, "--case=more", "--expect=4"}, "", 30s);
  EXPECT_FALSE(result.timed_out) << describe(result);
  EXPECT_NE(result.exit_code, 0) << describe(result);
  EXPECT_NE(result.err.find("bsp_begin(5) on pid 0 asks for more processes than the 4 started; start more "
                            "(the launcher's -n 5)"),
            std::string::npos)
      << describe(result);
  EXPECT_EQ(result.err.find("bsprun"), std::string::npos) << describe(result);
}

TEST_F(MpirunTest, OneProcessAndEight) {
  for (int procs : {1, 8}) {
    ProgramResult result = mpirun(procs, "tcp",
                                  {kPmixCases, "--case=begin_sync_end", "--expect=" + std::to_string(procs)});
    ASSERT_EQ(result.exit_code, 0) << describe(result);
    EXPECT_NE(result.out.find("passed (" + std::to_string(procs) + " processes)"), std::string::npos)
        << describe(result);
  }
}

// nic (raw frames on lo; needs CAP_NET_RAW).
TEST_F(MpirunTest, NicTransport) {
  if (::geteuid() != 0) GTEST_SKIP() << "nic needs CAP_NET_RAW (root)";
  ProgramResult result = mpirun(4, "nic", {kCases, "--case=many_small_puts"});
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_NE(result.out.find("case many_small_puts passed"), std::string::npos) << describe(result);
}

// ---- ways of failing: a non-zero status within seconds ----
TEST_F(MpirunTest, AbortFailsPromptlyPrintingTheMessageOnce) {
  for (const std::string transport : {"tcp", "udp"}) {
    ProgramResult result = mpirun(4, transport, {kCases, "--case=abort_with_message"}, "", 30s);
    EXPECT_FALSE(result.timed_out) << describe(result);
    EXPECT_NE(result.exit_code, 0) << describe(result);
    EXPECT_EQ(bsp::testing::count_occurrences(result.err, "custom abort message 42 from the test"), 1)
        << describe(result);
    EXPECT_LT(result.seconds, prompt_bound(5.0)) << describe(result);
  }
}

TEST_F(MpirunTest, KilledProcessFailsPromptly) {
  for (const std::string transport : {"tcp", "udp"}) {
    ProgramResult result = mpirun(4, transport, {kCases, "--case=killed_process"}, "", 30s);
    EXPECT_FALSE(result.timed_out) << describe(result);
    EXPECT_NE(result.exit_code, 0) << describe(result);
    EXPECT_NE(result.err.find("pid 3"), std::string::npos) << describe(result);
    EXPECT_LT(result.seconds, prompt_bound(5.0)) << describe(result);
  }
}

// Pid 0 hosts the coordinator: the others see the control connection close and stop.
TEST_F(MpirunTest, KilledPidZeroEndsTheOthers) {
  ProgramResult result = mpirun(4, "udp", {kPmixCases, "--case=pid0_killed"}, "", 30s);
  EXPECT_FALSE(result.timed_out) << describe(result);
  EXPECT_NE(result.exit_code, 0) << describe(result);
  EXPECT_LT(result.seconds, prompt_bound(5.0)) << describe(result);
}

// A process computing outside BSPlib (60 s) does not hold the failed job up.
TEST_F(MpirunTest, AbortStopsAProcessComputingOutsideBsplib) {
  ProgramResult result = mpirun(4, "tcp", {kPmixCases, "--case=abort_while_computing"}, "", 30s);
  EXPECT_FALSE(result.timed_out) << describe(result);
  EXPECT_NE(result.exit_code, 0) << describe(result);
  EXPECT_EQ(bsp::testing::count_occurrences(result.err, "abort while pid 1 computes"), 1) << describe(result);
  EXPECT_LT(result.seconds, prompt_bound(5.0)) << describe(result);
}

}  // namespace
