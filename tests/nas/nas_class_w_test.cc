// tests/nas/nas_class_w_test.cc: the longer runs: EP, CG and IS class W verify on 1, 2, 4
// and 8 processes over tcp (and udp when bsprun offers it), and class A on 4 processes.
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "tests/nas/nas_test_support.h"

namespace {

using Params = std::tuple<std::string, std::string, int>;  // kernel, transport, processes

class NasClassW : public ::testing::TestWithParam<Params> {};

TEST_P(NasClassW, Verifies) {
  const auto& [kernel, transport, procs] = GetParam();
  if (!nas::testing::transport_built_in(transport))
    GTEST_SKIP() << "transport " << transport << " is not built into bsprun";
  bsp::testing::ProgramResult run = nas::testing::run_kernel(kernel, 'W', procs, transport, {},
                                                             std::chrono::seconds(240));
  ASSERT_FALSE(run.timed_out) << run.out << run.err;
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_EQ(nas::testing::report_field(run.out, "Verification"), "SUCCESSFUL") << run.out;
  EXPECT_EQ(nas::testing::report_field(run.out, "Class"), "W");
}

std::string name_of(const ::testing::TestParamInfo<Params>& info) {
  return std::get<0>(info.param) + "_" + std::get<1>(info.param) + "_p" + std::to_string(std::get<2>(info.param));
}

INSTANTIATE_TEST_SUITE_P(Kernels, NasClassW,
                         ::testing::Combine(::testing::Values("ep", "cg", "is"), ::testing::Values("tcp", "udp"),
                                            ::testing::Values(1, 2, 4, 8)),
                         name_of);

class NasClassA : public ::testing::TestWithParam<Params> {};

TEST_P(NasClassA, Verifies) {
  const auto& [kernel, transport, procs] = GetParam();
  if (!nas::testing::transport_built_in(transport))
    GTEST_SKIP() << "transport " << transport << " is not built into bsprun";
  bsp::testing::ProgramResult run = nas::testing::run_kernel(kernel, 'A', procs, transport, {},
                                                             std::chrono::seconds(300));
  ASSERT_FALSE(run.timed_out) << run.out << run.err;
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_EQ(nas::testing::report_field(run.out, "Verification"), "SUCCESSFUL") << run.out;
  EXPECT_EQ(nas::testing::report_field(run.out, "Class"), "A");
}

INSTANTIATE_TEST_SUITE_P(Kernels, NasClassA,
                         ::testing::Combine(::testing::Values("ep", "cg", "is"), ::testing::Values("tcp", "udp"),
                                            ::testing::Values(4)),
                         name_of);

}  // namespace
