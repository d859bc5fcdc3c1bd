// tests/nas/vector_clones_test.cc: the kernels with vector clones (nas/common/vector_clones.h)
// print, on whatever clone this CPU runs, the same norms bit for bit as the baseline x86-64
// build (-DNAS_NO_VECTOR_CLONES) printed when they were added: MG, BT and SP class S on
// one process. It fails if a clone fuses multiply-adds (the packages' -ffp-contract=off) or
// reorders sums, which NPB's 1e-8 verification alone would let through.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "tests/nas/nas_test_support.h"

namespace {

// The "computed = X" values of a report, in order.
std::vector<std::string> computed_values(const std::string& out) {
  std::vector<std::string> values;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    std::size_t at = line.find("computed =");
    if (at == std::string::npos) continue;
    std::istringstream rest(line.substr(at + 10));
    std::string value;
    rest >> value;
    values.push_back(value);
  }
  return values;
}

std::vector<std::string> run_class_s(const std::string& kernel) {
  bsp::testing::ProgramResult run = nas::testing::run_kernel(kernel, 'S', 1, "shm");
  EXPECT_FALSE(run.timed_out) << run.out << run.err;
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_EQ(nas::testing::report_field(run.out, "Verification"), "SUCCESSFUL") << run.out;
  return computed_values(run.out);
}

TEST(VectorClones, MgPrintsTheBaselineNormBitForBit) {
  EXPECT_EQ(run_class_s("mg"), std::vector<std::string>{"5.307707005734881E-05"});
}

TEST(VectorClones, BtPrintsTheBaselineNormsBitForBit) {
  const std::vector<std::string> baseline = {"1.703428370954009E-01", "1.297525207002932E-02", "3.252792698948190E-02",
                                             "2.643642127514545E-02", "1.921178413174702E-01", "4.997691334580177E-04",
                                             "4.519566678297283E-05", "7.397376517296623E-05", "7.382123863237791E-05",
                                             "8.926963098748834E-04"};
  EXPECT_EQ(run_class_s("bt"), baseline);
}

TEST(VectorClones, SpPrintsTheBaselineNormsBitForBit) {
  const std::vector<std::string> baseline = {"2.747031545138957E-02", "1.036074670528644E-02", "1.623574506507623E-02",
                                             "1.584055722445565E-02", "3.484904060941862E-02", "2.728925855742578E-05",
                                             "1.036444664083883E-05", "1.615479828713881E-05", "1.575070499448017E-05",
                                             "3.417766618344996E-05"};
  EXPECT_EQ(run_class_s("sp"), baseline);
}

}  // namespace
