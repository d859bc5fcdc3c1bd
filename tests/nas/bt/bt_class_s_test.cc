// tests/nas/bt/bt_class_s_test.cc: BT class S under bsprun verifies against the official
// NPB norms on 1 and 4 processes over tcp, udp and nic (a transport this bsprun cannot
// use here is skipped, saying so) and on 9 over tcp; the report says UNSUCCESSFUL with a
// non-zero exit status when the references are perturbed; a process count that is not
// a square (the multi-partition needs q*q) is refused with a message.
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "tests/nas/nas_test_support.h"

namespace {

using namespace std::chrono_literals;
using bsp::testing::describe;
using nas::testing::report_field;
using nas::testing::run_kernel;

class BtClassS : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(BtClassS, Verifies) {
  const auto& [transport, procs] = GetParam();
  if (!nas::testing::transport_built_in(transport))
    GTEST_SKIP() << "transport " << transport << " is not usable by bsprun here";
  const auto result = run_kernel("bt", 'S', procs, transport, {}, 120s);
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_EQ(report_field(result.out, "Verification"), "SUCCESSFUL") << describe(result);
  EXPECT_EQ(report_field(result.out, "Total processes"), std::to_string(procs)) << describe(result);
  EXPECT_EQ(report_field(result.out, "Transport"), transport) << describe(result);
  EXPECT_EQ(result.out.find("FAILED"), std::string::npos) << describe(result);
}

INSTANTIATE_TEST_SUITE_P(Transports, BtClassS,
                         ::testing::Combine(::testing::Values("tcp", "udp", "nic"), ::testing::Values(1, 4)));

TEST(BtClassSNine, VerifiesOnNineProcesses) {
  const auto result = run_kernel("bt", 'S', 9, "tcp", {}, 120s);
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_EQ(report_field(result.out, "Verification"), "SUCCESSFUL") << describe(result);
}

TEST(BtReport, WrongReferenceIsUnsuccessful) {
  const auto result = run_kernel("bt", 'S', 4, "tcp", {"--wrong-verification"}, 120s);
  EXPECT_NE(result.exit_code, 0) << describe(result);
  EXPECT_EQ(report_field(result.out, "Verification"), "UNSUCCESSFUL") << describe(result);
}

TEST(BtDecomposition, RefusesNonSquareProcessCount) {
  for (int procs : {2, 3}) {
    const auto result = run_kernel("bt", 'S', procs, "tcp", {}, 60s);
    EXPECT_NE(result.exit_code, 0) << describe(result);
    EXPECT_NE(result.err.find("square number of processes"), std::string::npos) << describe(result);
  }
}

}  // namespace
