// tests/nas/mg_ft_class_w_test.cc: the longer check: MG and FT class W verify against
// the official NPB values on 1, 2, 4 and 8 processes (2x2x2 blocks for MG, 4-plane slabs
// for FT) over tcp and udp (udp skipped, saying so, when bsprun does not have it).
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "tests/nas/nas_test_support.h"

namespace {

using namespace std::chrono_literals;
using bsp::testing::describe;
using nas::testing::report_field;
using nas::testing::run_kernel;

class ClassW : public ::testing::TestWithParam<std::tuple<std::string, std::string, int>> {};

TEST_P(ClassW, Verifies) {
  const auto& [benchmark, transport, procs] = GetParam();
  if (!nas::testing::transport_built_in(transport))
    GTEST_SKIP() << "transport " << transport << " is not built into bsprun yet";
  const auto result = run_kernel(benchmark, 'W', procs, transport, {}, 300s);
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_EQ(report_field(result.out, "Verification"), "SUCCESSFUL") << describe(result);
}

INSTANTIATE_TEST_SUITE_P(MgAndFt, ClassW,
                         ::testing::Combine(::testing::Values("mg", "ft"), ::testing::Values("tcp", "udp"),
                                            ::testing::Values(1, 2, 4, 8)));

}  // namespace
