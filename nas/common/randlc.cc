// nas/common/randlc.cc: the NPB generator (see randlc.h) on exact 64-bit integers.
#include "nas/common/randlc.h"

namespace nas {

double randlc(double* x, double a) {
  std::uint64_t next = mul_mod46(static_cast<std::uint64_t>(a), static_cast<std::uint64_t>(*x));
  *x = static_cast<double>(next);
  return static_cast<double>(next) * kTwoToMinus46;
}

void vranlc(int n, double* x, double a, double* y) {
  const std::uint64_t a1 = static_cast<std::uint64_t>(a);
  std::uint64_t state = static_cast<std::uint64_t>(*x);
  int i = 0;
  if (n >= 8) {
    // Four interleaved chains, lane j at the (i+j+1)-th successor, each stepping by a^4:
    // four independent multiplies in flight instead of one chain of dependent ones
    // (the same numbers, exactly). Values below 2^46 convert from signed integers, the
    // one-instruction conversion.
    const std::uint64_t a2 = mul_mod46(a1, a1), a3 = mul_mod46(a2, a1), a4 = mul_mod46(a2, a2);
    std::uint64_t s0 = mul_mod46(a1, state), s1 = mul_mod46(a2, state), s2 = mul_mod46(a3, state),
                  s3 = mul_mod46(a4, state);
    for (; i + 4 <= n; i += 4) {
      y[i] = static_cast<double>(static_cast<std::int64_t>(s0)) * kTwoToMinus46;
      y[i + 1] = static_cast<double>(static_cast<std::int64_t>(s1)) * kTwoToMinus46;
      y[i + 2] = static_cast<double>(static_cast<std::int64_t>(s2)) * kTwoToMinus46;
      y[i + 3] = static_cast<double>(static_cast<std::int64_t>(s3)) * kTwoToMinus46;
      state = s3;
      s0 = mul_mod46(a4, s0), s1 = mul_mod46(a4, s1), s2 = mul_mod46(a4, s2), s3 = mul_mod46(a4, s3);
    }
  }
  for (; i < n; ++i) {
    state = mul_mod46(a1, state);
    y[i] = static_cast<double>(static_cast<std::int64_t>(state)) * kTwoToMinus46;
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
