// tests/level1/level1_test.cc: runs tests/level1/level1_check (every function of
// bsp_level1.h against serially computed answers) under bsprun on each transport with
// 1, 2, 3, 4 and 8 processes; then its misuse cases, which must stop the job with a
// non-zero exit and the offending function's name and value on stderr.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "tests/run_program.h"

namespace {

using bsp::testing::describe;
using bsp::testing::ProgramResult;
using bsp::testing::run_program;
using namespace std::chrono_literals;

const std::string kBsprun = "bsplib/bsprun";
const std::string kCheck = "tests/level1/level1_check";

ProgramResult run_check(const std::string& transport, int procs, const std::vector<std::string>& arguments = {}) {
  std::vector<std::string> argv = {kBsprun, "-n", std::to_string(procs), "--transport=" + transport, kCheck};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  return run_program(argv, 60s);
}

using Run = std::tuple<std::string, int>;  // transport, processes

std::string run_name(const ::testing::TestParamInfo<Run>& info) {
  return std::get<0>(info.param) + "_p" + std::to_string(std::get<1>(info.param));
}

class Level1Test : public ::testing::TestWithParam<Run> {
 protected:
  void SetUp() override {
    if (!bsp::testing::transport_usable(kBsprun, transport())) {
      GTEST_SKIP() << "transport " << transport() << " is not built in or cannot run here";
    }
  }
  const std::string& transport() const { return std::get<0>(GetParam()); }
  int procs() const { return std::get<1>(GetParam()); }
};

TEST_P(Level1Test, MatchesSerialAnswers) {
  ProgramResult result = run_check(transport(), procs());
  ASSERT_FALSE(result.timed_out) << describe(result);
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_EQ(bsp::testing::count_occurrences(result.out, "level1 passed"), 1) << describe(result);
}

INSTANTIATE_TEST_SUITE_P(AllTransports, Level1Test,
                         ::testing::Combine(::testing::Values("tcp", "udp", "nic", "shm"),
                                            ::testing::Values(1, 2, 3, 4, 8)),
                         run_name);

// ---- misuse ----
class Level1MisuseTest : public Level1Test {
 protected:
  // Runs a misuse case; it must fail, in time, with every expected piece on stderr.
  void expect_stopped(const std::string& name, const std::vector<std::string>& expected) {
    ProgramResult result = run_check(transport(), procs(), {"--case=" + name});
    EXPECT_FALSE(result.timed_out) << describe(result);
    EXPECT_NE(result.exit_code, 0) << describe(result);
    EXPECT_EQ(result.out.find("level1 passed"), std::string::npos) << describe(result);
    for (const std::string& piece : expected)
      EXPECT_NE(result.err.find(piece), std::string::npos) << piece << "\n" << describe(result);
  }
};

TEST_P(Level1MisuseTest, BroadcastFromRootOutOfRange) {
  const std::string p = std::to_string(procs());
  expect_stopped("bad_root", {"bsp_bcast (called at tests/level1/level1_check.c:",
                              "root pid " + p + " is out of range: there are " + p + " processes"});
}

TEST_P(Level1MisuseTest, FoldWithNegativeNbytes) {
  expect_stopped("negative_nbytes", {"bsp_fold (called at", "nbytes is -4"});
}

TEST_P(Level1MisuseTest, GatherIntoNull) {
  expect_stopped("null_dst", {"bsp_gather on pid 0: dst is NULL but nbytes is 4"});
}

TEST_P(Level1MisuseTest, DifferentCollectivesOnDifferentProcesses) {
  if (procs() < 2) GTEST_SKIP() << "needs two processes";
  // Pid 1 or 2 reports it, whichever's abort reaches the launcher first.
  expect_stopped("mismatched_calls", {"bsp_maxI on pid ",
                                      ": pid 0 called bsp_sumI (nbytes 4) where this process "
                                      "called bsp_maxI (nbytes 4)"});
}

INSTANTIATE_TEST_SUITE_P(Transports, Level1MisuseTest,
                         ::testing::Combine(::testing::Values("tcp", "udp"), ::testing::Values(1, 3)), run_name);

}  // namespace
