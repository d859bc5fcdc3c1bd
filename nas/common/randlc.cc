// nas/common/randlc.cc: the NPB generator (see randlc.h) on exact 64-bit integers.
#include "nas/common/randlc.h"

namespace nas {

double randlc(double* x, double a) {
  std::uint64_t next = mul_mod46(static_cast<std::uint64_t>(a), static_cast<std::uint64_t>(*x));
  *x = static_cast<double>(next);
  return static_cast<double>(next) * kTwoToMinus46;
}

void vranlc(int n, double* x, double a, double* y) {
  const std::uint64_t multiplier = static_cast<std::uint64_t>(a);
  std::uint64_t state = static_cast<std::uint64_t>(*x);
  for (int i = 0; i < n; ++i) {
    state = mul_mod46(multiplier, state);
    y[i] = static_cast<double>(state) * kTwoToMinus46;
  }
  *x = static_cast<double>(state);
}

double npb_power(double a, long long exponent) {
  std::uint64_t result = 1;
  std::uint64_t square = static_cast<std::uint64_t>(a);
  while (exponent > 0) {
    if (exponent & 1) result = mul_mod46(result, square);
    square = mul_mod46(square, square);
    exponent >>= 1;
  }
  return static_cast<double>(result);
}

}  // namespace nas
