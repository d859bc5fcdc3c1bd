// tests/nas/ft_verification_test.cc: FT class S under bsprun verifies all six official
// NPB checksums on 1, 2 and 4 processes over every transport this bsprun has (tcp
// always; udp skipped, saying so, until it is built in); the report says UNSUCCESSFUL
// and the exit status is non-zero when the references are perturbed; a process count
// that does not divide the grid is refused with a message.
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "tests/nas/nas_test_support.h"

namespace {

using namespace std::chrono_literals;
using bsp::testing::describe;
using nas::testing::report_field;
using nas::testing::run_kernel;

class FtClassS : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(FtClassS, Verifies) {
  const auto& [transport, procs] = GetParam();
  if (!nas::testing::transport_built_in(transport))
    GTEST_SKIP() << "transport " << transport << " is not built into bsprun yet";
  const auto result = run_kernel("ft", 'S', procs, transport, {}, 120s);
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_EQ(report_field(result.out, "Verification"), "SUCCESSFUL") << describe(result);
  EXPECT_EQ(bsp::testing::count_occurrences(result.out, "  ok\n"), 6) << describe(result);
  EXPECT_EQ(report_field(result.out, "Total processes"), std::to_string(procs)) << describe(result);
}

INSTANTIATE_TEST_SUITE_P(Transports, FtClassS,
                         ::testing::Combine(::testing::Values("tcp", "udp", "nic"), ::testing::Values(1, 2, 4)));

TEST(FtReport, WrongReferenceIsUnsuccessful) {
  const auto result = run_kernel("ft", 'S', 2, "tcp", {"--wrong-verification"}, 120s);
  EXPECT_NE(result.exit_code, 0) << describe(result);
  EXPECT_EQ(report_field(result.out, "Verification"), "UNSUCCESSFUL") << describe(result);
}

TEST(FtDecomposition, RefusesThreeProcesses) {
  const auto result = run_kernel("ft", 'S', 3, "tcp", {}, 60s);
  EXPECT_NE(result.exit_code, 0) << describe(result);
  EXPECT_NE(result.err.find("process count to divide"), std::string::npos) << describe(result);
}

}  // namespace
