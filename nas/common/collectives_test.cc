// nas/common/collectives_test.cc: runs collectives_check under bsprun on 1, 2, 3, 4 and 8
// processes over tcp and expects it to report success.
#include <gtest/gtest.h>

#include <string>

#include "tests/run_program.h"

namespace {

class Collectives : public ::testing::TestWithParam<int> {};

TEST_P(Collectives, AgreeWithTheirDefinition) {
  const int procs = GetParam();
  bsp::testing::ProgramResult run = bsp::testing::run_program(
      {"bsplib/bsprun", "-n", std::to_string(procs), "--transport=tcp", "nas/common/collectives_check"},
      std::chrono::seconds(60));
  ASSERT_FALSE(run.timed_out) << run.err;
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("collectives ok on " + std::to_string(procs) + " processes"), std::string::npos)
      << run.out << run.err;
}

INSTANTIATE_TEST_SUITE_P(Processes, Collectives, ::testing::Values(1, 2, 3, 4, 8));

}  // namespace
