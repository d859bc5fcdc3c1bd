// tests/nas/sp/sp_verification_test.cc: SP class S under bsprun verifies against the
// official NPB norms on 1 and 4 processes over tcp, udp and nic (a transport bsprun does
// not offer, or nic without root, is skipped, saying so); the report says UNSUCCESSFUL
// and the exit status is non-zero when the references are perturbed; a non-square process
// count is refused with a message naming the requirement.
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "tests/nas/nas_test_support.h"

namespace {

using namespace std::chrono_literals;
using bsp::testing::describe;
using nas::testing::report_field;
using nas::testing::run_kernel;

class SpClassS : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(SpClassS, Verifies) {
  const auto& [transport, procs] = GetParam();
  if (!nas::testing::transport_built_in(transport))
    GTEST_SKIP() << "transport " << transport << " is not usable here (not built in, or nic without root)";
  const auto result = run_kernel("sp", 'S', procs, transport, {}, 120s);
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_EQ(report_field(result.out, "Verification"), "SUCCESSFUL") << describe(result);
  EXPECT_EQ(report_field(result.out, "Total processes"), std::to_string(procs)) << describe(result);
  EXPECT_EQ(report_field(result.out, "Transport"), transport) << describe(result);
  EXPECT_EQ(report_field(result.out, "Iterations"), "100") << describe(result);
}

INSTANTIATE_TEST_SUITE_P(Transports, SpClassS,
                         ::testing::Combine(::testing::Values("tcp", "udp", "nic"), ::testing::Values(1, 4)));

TEST(SpReport, WrongReferenceIsUnsuccessful) {
  const auto result = run_kernel("sp", 'S', 4, "tcp", {"--wrong-verification"}, 120s);
  EXPECT_NE(result.exit_code, 0) << describe(result);
  EXPECT_EQ(report_field(result.out, "Verification"), "UNSUCCESSFUL") << describe(result);
}

TEST(SpDecomposition, RefusesNonSquareProcessCount) {
  const auto result = run_kernel("sp", 'S', 2, "tcp", {}, 60s);
  EXPECT_NE(result.exit_code, 0) << describe(result);
  EXPECT_NE(result.err.find("square number of processes"), std::string::npos) << describe(result);
  EXPECT_EQ(report_field(result.out, "Verification"), "") << describe(result);
}

}  // namespace
