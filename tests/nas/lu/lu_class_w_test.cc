// tests/nas/lu/lu_class_w_test.cc: the longer check: LU class W (33^3, 300 SSOR
// iterations) verifies against the official NPB values on 1 and 4 processes over tcp.
#include <gtest/gtest.h>

#include <string>

#include "tests/nas/nas_test_support.h"

namespace {

using namespace std::chrono_literals;
using bsp::testing::describe;
using nas::testing::report_field;
using nas::testing::run_kernel;

class LuClassW : public ::testing::TestWithParam<int> {};

TEST_P(LuClassW, VerifiesOverTcp) {
  const int procs = GetParam();
  const auto result = run_kernel("lu", 'W', procs, "tcp", {}, 600s);
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_EQ(report_field(result.out, "Verification"), "SUCCESSFUL") << describe(result);
  EXPECT_EQ(report_field(result.out, "Total processes"), std::to_string(procs)) << describe(result);
}

INSTANTIATE_TEST_SUITE_P(Processes, LuClassW, ::testing::Values(1, 4));

}  // namespace
