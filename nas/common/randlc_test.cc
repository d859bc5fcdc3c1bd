// nas/common/randlc_test.cc: the integer NPB generator against the specification's
// split-double formulation of x <- a*x mod 2^46, and the jump-ahead multiplier.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "nas/common/randlc.h"

namespace {

// The NPB specification's generator done in doubles: a and x split into 23-bit halves so
// that every product is exact.
double specification_randlc(double* x, double a) {
  const double r23 = std::ldexp(1.0, -23), r46 = r23 * r23, t23 = std::ldexp(1.0, 23), t46 = t23 * t23;
  double a_high = std::floor(r23 * a), a_low = a - t23 * a_high;
  double x_high = std::floor(r23 * *x), x_low = *x - t23 * x_high;
  double cross = a_high * x_low + a_low * x_high;
  double cross_low = cross - t23 * std::floor(r23 * cross);
  double full = t23 * cross_low + a_low * x_low;
  *x = full - t46 * std::floor(r46 * full);
  return r46 * *x;
}

TEST(Randlc, MatchesSpecificationStream) {
  double x = nas::kNpbSeed, y = nas::kNpbSeed;
  for (int i = 0; i < 100000; ++i) {
    double ours = nas::randlc(&x, nas::kNpbMultiplier);
    double spec = specification_randlc(&y, nas::kNpbMultiplier);
    ASSERT_EQ(ours, spec) << "step " << i;
    ASSERT_EQ(x, y);
    ASSERT_GT(ours, 0.0);
    ASSERT_LT(ours, 1.0);
  }
}

TEST(Randlc, VranlcEqualsRepeatedRandlc) {
  double x = 271828183.0, y = 271828183.0;
  std::vector<double> values(1000);
  nas::vranlc(1000, &x, nas::kNpbMultiplier, values.data());
  for (double value : values) ASSERT_EQ(value, nas::randlc(&y, nas::kNpbMultiplier));
  EXPECT_EQ(x, y);
}

TEST(Randlc, VranlcEveryLengthEqualsRepeatedRandlc) {
  // The interleaved chains and the tail after them, for lengths around multiples of 4.
  for (int n = 0; n <= 21; ++n) {
    double x = 314159265.0, y = 314159265.0;
    std::vector<double> values(n + 1, -1.0);
    nas::vranlc(n, &x, nas::kNpbMultiplier, values.data());
    for (int i = 0; i < n; ++i) ASSERT_EQ(values[i], nas::randlc(&y, nas::kNpbMultiplier)) << "n " << n << " i " << i;
    EXPECT_EQ(values[n], -1.0) << "n " << n;
    EXPECT_EQ(x, y) << "n " << n;
  }
}

TEST(Randlc, PowerJumpsAhead) {
  for (long long steps : {0LL, 1LL, 2LL, 7LL, 1000LL, 65537LL}) {
    double jumped = nas::kNpbSeed, walked = nas::kNpbSeed;
    nas::randlc(&jumped, nas::npb_power(nas::kNpbMultiplier, steps));
    for (long long i = 0; i < steps; ++i) nas::randlc(&walked, nas::kNpbMultiplier);
    if (steps == 0) walked = nas::kNpbSeed;
    EXPECT_EQ(jumped, walked) << steps;
  }
}

}  // namespace
