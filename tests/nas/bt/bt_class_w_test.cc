// tests/nas/bt/bt_class_w_test.cc: the longer check: BT class W (24^3, 200 steps)
// verifies against the official NPB norms on 1 process and on 4 (2x2 multi-partition)
// over tcp and udp (udp skipped, saying so, when bsprun cannot use it here).
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "tests/nas/nas_test_support.h"

namespace {

using namespace std::chrono_literals;
using bsp::testing::describe;
using nas::testing::report_field;
using nas::testing::run_kernel;

class BtClassW : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(BtClassW, Verifies) {
  const auto& [transport, procs] = GetParam();
  if (!nas::testing::transport_built_in(transport))
    GTEST_SKIP() << "transport " << transport << " is not usable by bsprun here";
  const auto result = run_kernel("bt", 'W', procs, transport, {}, 300s);
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_EQ(report_field(result.out, "Verification"), "SUCCESSFUL") << describe(result);
}

INSTANTIATE_TEST_SUITE_P(Transports, BtClassW,
                         ::testing::Values(std::make_tuple("tcp", 1), std::make_tuple("tcp", 4),
                                           std::make_tuple("udp", 4)));

}  // namespace
