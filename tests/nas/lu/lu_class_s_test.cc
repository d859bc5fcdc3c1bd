// tests/nas/lu/lu_class_s_test.cc: LU class S under bsprun verifies against the
// official NPB values on 1 and 4 processes over tcp, udp and nic (a transport this
// bsprun cannot use here is skipped, saying so) and on 8 over tcp; the report says
// UNSUCCESSFUL and the exit status is non-zero when the references are perturbed; a
// process count that is not a power of two is refused with a message; the pipeline's
// block size does not change the results.
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "tests/nas/nas_test_support.h"

namespace {

using namespace std::chrono_literals;
using bsp::testing::describe;
using nas::testing::report_field;
using nas::testing::run_kernel;

void expect_verified(const std::string& transport, int procs) {
  const auto result = run_kernel("lu", 'S', procs, transport, {}, 120s);
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_EQ(report_field(result.out, "Verification"), "SUCCESSFUL") << describe(result);
  EXPECT_EQ(report_field(result.out, "Total processes"), std::to_string(procs)) << describe(result);
  EXPECT_EQ(report_field(result.out, "Transport"), transport) << describe(result);
}

class LuClassS : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(LuClassS, Verifies) {
  const auto& [transport, procs] = GetParam();
  if (!nas::testing::transport_built_in(transport)) GTEST_SKIP() << "transport " << transport << " is not usable here";
  expect_verified(transport, procs);
}

INSTANTIATE_TEST_SUITE_P(Transports, LuClassS,
                         ::testing::Combine(::testing::Values("tcp", "udp", "nic"), ::testing::Values(1, 4)));

TEST(LuClassSEight, VerifiesOverTcp) { expect_verified("tcp", 8); }

// The k-block size only regroups the wavefront's supersteps: every point is solved from
// the same values, so the printed results must be the same digits.
TEST(LuPipeline, BlockSizeDoesNotChangeResults) {
  const auto one = run_kernel("lu", 'S', 4, "tcp", {"--kblock=1"}, 120s);
  const auto all = run_kernel("lu", 'S', 4, "tcp", {"--kblock=10"}, 120s);
  ASSERT_EQ(one.exit_code, 0) << describe(one);
  ASSERT_EQ(all.exit_code, 0) << describe(all);
  for (const char* line : {"residual 1", "residual 5", "error 3", "surface"}) {
    EXPECT_NE(report_field(one.out, line), "") << describe(one);
    EXPECT_EQ(report_field(one.out, line), report_field(all.out, line)) << line;
  }
}

TEST(LuReport, WrongReferenceIsUnsuccessful) {
  const auto result = run_kernel("lu", 'S', 2, "tcp", {"--wrong-verification"}, 120s);
  EXPECT_NE(result.exit_code, 0) << describe(result);
  EXPECT_EQ(report_field(result.out, "Verification"), "UNSUCCESSFUL") << describe(result);
}

TEST(LuDecomposition, RefusesThreeProcesses) {
  const auto result = run_kernel("lu", 'S', 3, "tcp", {}, 60s);
  EXPECT_NE(result.exit_code, 0) << describe(result);
  EXPECT_NE(result.err.find("power-of-two number of processes"), std::string::npos) << describe(result);
}

}  // namespace
