// tests/nas/sp/sp_class_w_test.cc: the longer check: SP class W (36^3, 400 steps)
// verifies against the official NPB norms on 1 process and on 4 (2x2x2 cells).
#include <gtest/gtest.h>

#include <string>

#include "tests/nas/nas_test_support.h"

namespace {

using namespace std::chrono_literals;
using bsp::testing::describe;
using nas::testing::report_field;
using nas::testing::run_kernel;

class SpClassW : public ::testing::TestWithParam<int> {};

TEST_P(SpClassW, Verifies) {
  const int procs = GetParam();
  const auto result = run_kernel("sp", 'W', procs, "tcp", {}, 600s);
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_EQ(report_field(result.out, "Verification"), "SUCCESSFUL") << describe(result);
  EXPECT_EQ(report_field(result.out, "Total processes"), std::to_string(procs)) << describe(result);
}

INSTANTIATE_TEST_SUITE_P(Processes, SpClassW, ::testing::Values(1, 4));

}  // namespace
