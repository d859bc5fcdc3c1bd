// tests/cpp/cpp_test.cc: the C++ interface end to end: cpp_cases --case=features under
// bsprun on tcp, udp, nic, shm and the default transport, on 1 to 8 processes (and over
// the sparse protocol); then each run-time misuse stops the job with its message.
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
const std::string kCases = "tests/cpp/cpp_cases";

ProgramResult run_case(const std::string& transport, int procs, const std::string& name,
                       const std::string& sync = "auto") {
  std::vector<std::string> argv = {kBsprun, "-n", std::to_string(procs), "--sync=" + sync};
  if (transport != "default") argv.push_back("--transport=" + transport);
  argv.push_back(kCases);
  argv.push_back("--case=" + name);
  return run_program(argv, 120s);
}

using Features = std::tuple<std::string, int>;  // transport, processes

class CppFeaturesTest : public ::testing::TestWithParam<Features> {};

TEST_P(CppFeaturesTest, Hold) {
  const auto& [transport, procs] = GetParam();
  if (transport != "default" && !bsp::testing::transport_usable(kBsprun, transport)) {
    GTEST_SKIP() << "transport " << transport << " is not built in or needs root";
  }
  ProgramResult result = run_case(transport, procs, "features");
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_NE(result.out.find("cpp features passed on " + std::to_string(procs) + " processes"), std::string::npos)
      << describe(result);
  // world.log: rank 0 prints every rank's lines at the sync, ordered by rank.
  std::string expected;
  for (int r = 0; r < procs; ++r) {
    expected += "log line 1 of rank " + std::to_string(r) + "\nlog line 2 of rank " + std::to_string(r) + "\n";
  }
  EXPECT_NE(result.out.find(expected), std::string::npos) << describe(result);
}

INSTANTIATE_TEST_SUITE_P(EveryTransport, CppFeaturesTest,
                         ::testing::Combine(::testing::Values("tcp", "udp", "nic", "shm", "default"),
                                            ::testing::Range(1, 9)),
                         [](const ::testing::TestParamInfo<Features>& info) {
                           return std::get<0>(info.param) + "_" + std::to_string(std::get<1>(info.param));
                         });

TEST(CppSparseSync, FeaturesHoldOverTheSparseProtocol) {
  for (const char* transport : {"udp", "shm"}) {
    ProgramResult result = run_case(transport, 5, "features", "sparse");
    ASSERT_EQ(result.exit_code, 0) << describe(result);
    EXPECT_NE(result.out.find("cpp features passed on 5 processes"), std::string::npos) << describe(result);
  }
}

// Misuse: a non-zero exit and the message, once.
void expect_failure(const std::string& name, const std::string& message) {
  for (const char* transport : {"tcp", "shm"}) {
    ProgramResult result = run_case(transport, 3, name);
    EXPECT_NE(result.exit_code, 0) << describe(result);
    EXPECT_EQ(bsp::testing::count_occurrences(result.err, message), 1) << describe(result);
  }
}

TEST(CppMisuse, ElementOutOfRange) {
  expect_failure("out_of_range",
                 "bsplib: bsp::coarray::operator[] by rank 2: element 4 of rank 0's coarray of 4 "
                 "elements (0..3)");
}

TEST(CppMisuse, SliceOutOfRange) {
  expect_failure("slice_out_of_range",
                 "bsplib: bsp::coarray::operator[{a, b}] by rank 2: elements [0, 5) of rank 0's coarray of 4 elements");
}

TEST(CppMisuse, FutureReadBeforeTheSync) {
  expect_failure("future_early", "bsplib: bsp::future::value by rank 2: read before the sync that completes its get");
}

TEST(CppMisuse, VarDestroyedOnSomeRanksOnly) {
  expect_failure("var_on_some_ranks",
                 "registrations differ between processes in superstep 1: pid 0 made 0 bsp_push_reg and 1 bsp_pop_reg");
}

}  // namespace
