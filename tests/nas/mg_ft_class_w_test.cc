// tests/nas/mg_ft_class_w_test.cc: the longer check: MG and FT class W verify against
// the official NPB values on 1, 2 and 4 processes over tcp, and on 8 (2x2x2 blocks for
// MG, 4-plane slabs for FT).
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "tests/nas/nas_test_support.h"

namespace {

using namespace std::chrono_literals;
using bsp::testing::describe;
using nas::testing::report_field;
using nas::testing::run_kernel;

class ClassW : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(ClassW, Verifies) {
  const auto& [benchmark, procs] = GetParam();
  const auto result = run_kernel(benchmark, 'W', procs, "tcp", {}, 300s);
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_EQ(report_field(result.out, "Verification"), "SUCCESSFUL") << describe(result);
}

INSTANTIATE_TEST_SUITE_P(MgAndFt, ClassW,
                         ::testing::Combine(::testing::Values("mg", "ft"),
                                            ::testing::Values(1, 2, 4, 8)));

}  // namespace
