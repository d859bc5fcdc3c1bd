// tests/examples_test.cc: end to end as a user works: install the toolchain with
// tools/install.sh, compile the C examples (and the C++ ones of examples/cpp/, on
// <bsp/bsp.hpp>) with the installed bspcc, run them with the installed bsprun (and
// directly), and check what they print and their exit status.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

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

  // A C++ example: bspcc compiles it as C++20 against the installed include/bsp/bsp.hpp.
  static std::string compile_cpp(const std::string& example) {
    std::string binary = prefix_ + "/cpp_" + example;
    ProgramResult built = run_program(
        {prefix_ + "/bin/bspcc", "-O2", "-Wall", "-Wextra", "-Werror", "examples/cpp/" + example + ".cc", "-o", binary},
        180s);
    EXPECT_EQ(built.exit_code, 0) << built.err;
    return binary;
  }

  static ProgramResult run(int procs, const std::string& binary, const std::string& input = "",
                           const std::string& transport = "tcp", const std::vector<std::string>& args = {}) {
    std::vector<std::string> argv = {prefix_ + "/bin/bsprun", "-n", std::to_string(procs), "--transport=" + transport,
                                     binary};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_program(argv, 60s, input);
  }

  static std::string prefix_;
};

std::string ExamplesTest::prefix_;

TEST_F(ExamplesTest, InstallLaysOutTheToolchain) {
  for (const char* file : {"/bin/bspcc", "/bin/bsprun", "/include/bsp.h", "/include/bsp/bsp.hpp",
                           "/include/bsp/entry.h", "/lib/libbsp.so", "/lib/pkgconfig/bsp.pc"}) {
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

// A Makefile written for the Oxford toolset (BSPedupack's flags) works unchanged: the
// toolset's options never reach the compiler, and -device / -flibrary-level / -stat become
// the program's defaults, which the environment still overrides.
TEST_F(ExamplesTest, OxfordCompilerOptions) {
  const std::vector<std::string> oxford = {
      "-flibrary-level", "2", "-bspfifo", "10000", "-fcombine-puts", "-fcombine-puts-buffer", "256K,128M,4K"};
  std::vector<std::string> show = {prefix_ + "/bin/bspcc", "--show", "-O3"};
  show.insert(show.end(), oxford.begin(), oxford.end());
  show.insert(show.end(), {"examples/inner_product.c", "-o", prefix_ + "/ip_oxford"});
  ProgramResult shown = run_program(show, 30s);
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  for (const char* option : {"-flibrary-level", "-bspfifo", "-fcombine-puts", "256K"}) {
    EXPECT_EQ(shown.out.find(option), std::string::npos) << option << " reached the compiler: " << shown.out;
  }
  std::vector<std::string> build(show);
  build.erase(build.begin() + 1);  // without --show
  ProgramResult built = run_program(build, 120s);
  ASSERT_EQ(built.exit_code, 0) << built.err;
  // One note for the compile, naming every ignored option (a BSPedupack make printed
  // one per option per file); none with BSPCC_QUIET=1.
  EXPECT_EQ(bsp::testing::count_occurrences(built.err, "bspcc:"), 1) << built.err;
  EXPECT_NE(built.err.find("ignored: -bspfifo 10000 ("), std::string::npos) << built.err;
  EXPECT_NE(built.err.find(", -fcombine-puts-buffer 256K,128M,4K ("), std::string::npos) << built.err;
  ProgramResult quiet = run_program(build, 120s, "", {{"BSPCC_QUIET", "1"}});
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.err, "");
  ProgramResult ran = run(4, prefix_ + "/ip_oxford");
  EXPECT_EQ(ran.exit_code, 0) << ran.err;
  EXPECT_NE(ran.out.find("(correct)"), std::string::npos) << ran.out;

  const std::string source = prefix_ + "/defaults.c";
  std::ofstream(source)
      << "#include \"bsp.h\"\n"
         "int main(void) {\n"
         "  printf(\"transport=%s level=%s\\n\", getenv(\"BSP_TRANSPORT\"), getenv(\"BSP_LIBRARY_LEVEL\"));\n"
         "  return 0;\n}\n";
  ProgramResult compiled = run_program({prefix_ + "/bin/bspcc", "-Werror=implicit-function-declaration", "-device",
                                        "udp", "-flibrary-level=0", source, "-o", prefix_ + "/defaults"},
                                       120s);
  ASSERT_EQ(compiled.exit_code, 0) << compiled.err;
  ProgramResult defaults = run_program({prefix_ + "/defaults"}, 30s);
  EXPECT_NE(defaults.out.find("transport=udp level=0"), std::string::npos) << defaults.out;
  ProgramResult overridden = run_program({prefix_ + "/defaults"}, 30s, "", {{"BSP_TRANSPORT", "nic"}});
  EXPECT_NE(overridden.out.find("transport=nic level=0"), std::string::npos) << overridden.out;
  ProgramResult unknown = run_program({prefix_ + "/bin/bspcc", "-device", "carrier-pigeon", source}, 30s);
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_NE(unknown.err.find("unknown -device carrier-pigeon"), std::string::npos) << unknown.err;
}

// ---- the C++ interface's examples (examples/cpp/) ----

TEST_F(ExamplesTest, CppHello) {
  std::string binary = compile_cpp("hello");
  ProgramResult result = run(3, binary, "", "udp");
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("hello from rank 0 of 3\nhello from rank 1 of 3\nhello from rank 2 of 3\n"
                            "rank 0 heard from rank 2\nrank 1 heard from rank 0\nrank 2 heard from rank 1\n"),
            std::string::npos)
      << result.out;
  ProgramResult direct = run_program({binary}, 60s, "", {{"BSP_PROCESSES", "2"}});
  EXPECT_EQ(direct.exit_code, 0) << direct.err;
  EXPECT_NE(direct.out.find("rank 1 heard from rank 0"), std::string::npos) << direct.out;
}

TEST_F(ExamplesTest, CppInnerProduct) {
  std::string binary = compile_cpp("inner_product");
  for (int procs : {1, 3, 4}) {
    ProgramResult result = run(procs, binary, "", "shm");
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_NE(result.out.find("= 333338333350000 (correct)"), std::string::npos) << result.out;
  }
}

TEST_F(ExamplesTest, CppWordCount) {
  std::string binary = compile_cpp("word_count");
  for (int procs : {1, 4}) {
    ProgramResult result = run(procs, binary);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_NE(
        result.out.find("42 words, 27 distinct, on " + std::to_string(procs) + " processes\n     6 the\n     4 a\n"),
        std::string::npos)
        << result.out;
  }
}

TEST_F(ExamplesTest, CppCannon) {
  std::string binary = compile_cpp("cannon");
  for (int procs : {1, 4, 9}) {
    ProgramResult result = run(procs, binary, "", "udp", {"36"});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_NE(result.out.find("(correct)"), std::string::npos) << result.out;
  }
  ProgramResult not_square = run(3, binary);
  EXPECT_NE(not_square.exit_code, 0);
  EXPECT_NE(not_square.err.find("cannon: p = 3 must be a square"), std::string::npos) << not_square.err;
}

TEST_F(ExamplesTest, CppSampleSort) {
  std::string binary = compile_cpp("sample_sort");
  for (int procs : {2, 5}) {
    ProgramResult result = run(procs, binary, "", "shm", {"200000"});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_NE(result.out.find("sorted 200000 numbers on " + std::to_string(procs) + " processes"), std::string::npos)
        << result.out;
  }
}

}  // namespace
