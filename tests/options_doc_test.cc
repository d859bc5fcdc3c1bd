// tests/options_doc_test.cc: the README's table of bsprun options is the one the options
// table prints (`bsprun --help=markdown`), every option's value is checked, and a bad one
// gets a one-line message naming the variable.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "tests/run_program.h"

namespace {

using bsp::testing::describe;
using bsp::testing::ProgramResult;
using bsp::testing::run_program;
using namespace std::chrono_literals;

TEST(OptionsDocTest, ReadmeShowsTheOptionsTable) {
  ProgramResult table = run_program({"bsplib/bsprun", "--help=markdown"}, 10s);
  ASSERT_EQ(table.exit_code, 0) << describe(table);
  std::ifstream readme("README.md");
  std::stringstream text;
  text << readme.rdbuf();
  EXPECT_NE(text.str().find(table.out), std::string::npos)
      << "README.md's options table differs from `bsprun --help=markdown`:\n"
      << table.out;
}

TEST(OptionsDocTest, BadValuesAreRefusedInOneLine) {
  for (const char* bad : {"--buffers=-5", "--buffers=1", "--buffers=10000000", "--spin-us=x", "--slice-us=50",
                          "--ack-policy=sometimes", "--library-level=3", "--stall-warn=0", "--mtu=70000", "--rx-ring=1",
                          "--nic-rx=v4", "--xdp-mode=fast", "--tcp-connections=0", "--shm-ring=x"}) {
    ProgramResult result = run_program({"bsplib/bsprun", "-n", "1", bad, "true"}, 10s);
    EXPECT_EQ(result.exit_code, 2) << bad << "\n" << describe(result);
    EXPECT_NE(result.err.find("BSP_"), std::string::npos) << bad << "\n" << describe(result);
    EXPECT_EQ(bsp::testing::count_occurrences(result.err, "\n"), 1) << bad << "\n" << describe(result);
  }
}

TEST(OptionsDocTest, NicRingsCanBeSet) {
  ProgramResult result = run_program({"bsplib/bsprun", "-n", "1", "--rx-ring=64", "--tx-ring=64", "true"}, 10s);
  EXPECT_EQ(result.exit_code, 0) << describe(result);
}

}  // namespace
