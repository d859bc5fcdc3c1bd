// tests/examples_test.cc: end to end as a user works: install the toolchain with
// tools/install.sh, compile the C examples with the installed bspcc, run them with the
// installed bsprun (and directly), and check what they print and their exit status.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "tests/run_program.h"

namespace {

using bsp::testing::ProgramResult;
using bsp::testing::run_program;
using namespace std::chrono_literals;

class ExamplesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const char* tmp = std::getenv("TEST_TMPDIR");
    prefix_ = std::string(tmp ? tmp : "/tmp") + "/bsp-install";
    ProgramResult installed = run_program({"tools/install.sh", prefix_}, 60s);
    ASSERT_EQ(installed.exit_code, 0) << installed.err;
  }

  static std::string compile(const std::string& example) {
    std::string binary = prefix_ + "/" + example;
    ProgramResult built = run_program(
        {prefix_ + "/bin/bspcc", "-O2", "-Wall", "-Werror", "-std=c99", "examples/" + example + ".c", "-o", binary},
        120s);
    EXPECT_EQ(built.exit_code, 0) << built.err;
    return binary;
  }

  static ProgramResult run(int procs, const std::string& binary, const std::string& input = "") {
    return run_program({prefix_ + "/bin/bsprun", "-n", std::to_string(procs), "--transport=tcp", binary}, 60s, input);
  }

  static std::string prefix_;
};

std::string ExamplesTest::prefix_;

TEST_F(ExamplesTest, InstallLaysOutTheToolchain) {
  for (const char* file : {"/bin/bspcc", "/bin/bsprun", "/include/bsp.h", "/lib/libbsp.so", "/lib/pkgconfig/bsp.pc"}) {
    ProgramResult listed = run_program({"test", "-e", prefix_ + file}, 10s);
    EXPECT_EQ(listed.exit_code, 0) << file;
  }
}

TEST_F(ExamplesTest, InnerProduct) {
  std::string binary = compile("inner_product");
  for (int procs : {1, 3, 4}) {
    ProgramResult result = run(procs, binary);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_NE(result.out.find("= 333338333350000 (correct)"), std::string::npos) << result.out;
  }
}

TEST_F(ExamplesTest, PrefixSums) {
  std::string binary = compile("prefix_sums");
  ProgramResult result = run(8, binary);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("pid 7: prefix sum 36"), std::string::npos) << result.out;
}

TEST_F(ExamplesTest, AllToAllSend) {
  std::string binary = compile("all_to_all_send");
  ProgramResult result = run(4, binary);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(bsp::testing::count_occurrences(result.out, "received 4 messages (48 bytes)"), 4) << result.out;
}

TEST_F(ExamplesTest, EveryPrimitiveUnderBsprunAndDirectly) {
  std::string binary = compile("every_primitive");
  ProgramResult launched = run(4, binary, "7\n");
  EXPECT_EQ(launched.exit_code, 0) << launched.err;
  EXPECT_NE(launched.out.find("every primitive behaved as the standard says on 4 processes"), std::string::npos);
  ProgramResult direct = run_program({binary}, 60s, "3\n");
  EXPECT_EQ(direct.exit_code, 0) << direct.err;
  EXPECT_NE(direct.out.find("every primitive behaved as the standard says"), std::string::npos);
}

TEST_F(ExamplesTest, CompilesAsCxxToo) {
  ProgramResult built = run_program(
      {prefix_ + "/bin/bspcc", "-O2", "-x", "c++", "examples/all_to_all_send.c", "-o", prefix_ + "/a2a_cxx"}, 120s);
  // -x c++ makes gcc treat the C source as C++: the header must work from C++ as well.
  EXPECT_EQ(built.exit_code, 0) << built.err;
}

}  // namespace
