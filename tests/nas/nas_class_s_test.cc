// tests/nas/nas_class_s_test.cc: EP, CG and IS (and IS on the C++ interface) class S verify with the official NPB
// values on 1, 2 and 4 processes over every transport in the list (tcp, udp, nic: a transport
// this build's bsprun does not offer is skipped with a message), and each prints the
// whole report: time, Mop/s, the comm/compute split and the packet statistics.
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "tests/nas/nas_test_support.h"

namespace {

using Params = std::tuple<std::string, std::string, int>;  // kernel, transport, processes

class NasClassS : public ::testing::TestWithParam<Params> {};

TEST_P(NasClassS, Verifies) {
  const auto& [kernel, transport, procs] = GetParam();
  if (!nas::testing::transport_built_in(transport))
    GTEST_SKIP() << "transport " << transport << " is not built into bsprun";
  bsp::testing::ProgramResult run = nas::testing::run_kernel(kernel, 'S', procs, transport);
  ASSERT_FALSE(run.timed_out) << run.out << run.err;
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_EQ(nas::testing::report_field(run.out, "Verification"), "SUCCESSFUL") << run.out;
  EXPECT_EQ(nas::testing::report_field(run.out, "Class"), "S");
  EXPECT_EQ(nas::testing::report_field(run.out, "Total processes"), std::to_string(procs));
  EXPECT_EQ(nas::testing::report_field(run.out, "Transport"), transport);
  EXPECT_GT(std::stod("0" + nas::testing::report_field(run.out, "Mop/s total")), 0.0) << run.out;
  EXPECT_NE(run.out.find("Communication time (s)"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("Computation time (s)"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("data received = "), std::string::npos) << run.out;
  // Frames carry the data of every transport but shm, where a small superstep travels in
  // its cache line and larger data through staging: there none may be counted.
  if (procs > 1 && transport != "shm") {
    EXPECT_EQ(run.out.find("data received = 0,"), std::string::npos) << "no packets counted:\n" << run.out;
  }
}

std::string name_of(const ::testing::TestParamInfo<Params>& info) {
  return std::get<0>(info.param) + "_" + std::get<1>(info.param) + "_p" + std::to_string(std::get<2>(info.param));
}

INSTANTIATE_TEST_SUITE_P(Kernels, NasClassS,
                         ::testing::Combine(::testing::Values("ep", "cg", "is", "is_cpp"),
                                            ::testing::Values("tcp", "udp", "nic", "shm"), ::testing::Values(1, 2, 4)),
                         name_of);

}  // namespace
