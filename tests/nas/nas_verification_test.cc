// tests/nas/nas_verification_test.cc: the failure path. With --wrong-verification the
// official reference values are perturbed, so every kernel must report UNSUCCESSFUL and
// exit non-zero; an unknown class is refused with a usage message and a non-zero exit.
#include <gtest/gtest.h>

#include <string>

#include "tests/nas/nas_test_support.h"

namespace {

class NasVerification : public ::testing::TestWithParam<std::string> {};

TEST_P(NasVerification, WrongReferenceIsUnsuccessful) {
  bsp::testing::ProgramResult run = nas::testing::run_kernel(GetParam(), 'S', 2, "tcp", {"--wrong-verification"});
  ASSERT_FALSE(run.timed_out) << run.out << run.err;
  EXPECT_NE(run.exit_code, 0) << run.out << run.err;
  EXPECT_EQ(nas::testing::report_field(run.out, "Verification"), "UNSUCCESSFUL") << run.out;
}

TEST_P(NasVerification, CorrectReferenceIsSuccessful) {
  bsp::testing::ProgramResult run = nas::testing::run_kernel(GetParam(), 'S', 2, "tcp");
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_EQ(nas::testing::report_field(run.out, "Verification"), "SUCCESSFUL") << run.out;
}

TEST_P(NasVerification, UnknownClassIsRefused) {
  bsp::testing::ProgramResult run = nas::testing::run_kernel(GetParam(), 'Q', 2, "tcp");
  EXPECT_NE(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.err.find("unsupported class"), std::string::npos) << run.err;
  EXPECT_EQ(run.out.find("Verification"), std::string::npos) << run.out;
}

INSTANTIATE_TEST_SUITE_P(Kernels, NasVerification, ::testing::Values("ep", "cg", "is"));

}  // namespace
