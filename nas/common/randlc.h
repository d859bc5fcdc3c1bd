// nas/common/randlc.h: the NAS Parallel Benchmarks' pseudo-random number generator, the
// linear congruential generator x(k+1) = a * x(k) mod 2^46 with results x / 2^46 in
// (0, 1). Seeds and multipliers are carried as doubles holding integers below 2^46, as
// in the NPB specification, so every kernel reproduces the reference streams bit for bit.
// The arithmetic is done exactly in 64-bit integers (a product's low 46 bits only depend
// on its low 64 bits), which is both exact and faster than the reference's split doubles.
#pragma once

#include <cstdint>

namespace nas {

// The usual NPB multiplier 5^13 and seed 314159265.
inline constexpr double kNpbMultiplier = 1220703125.0;
inline constexpr double kNpbSeed = 314159265.0;

// Advances *x to a * *x mod 2^46 and returns the new value divided by 2^46.
// *x and a must hold integers in [1, 2^46).
double randlc(double* x, double a);

// Generates n numbers of the stream: y[i] = the (i+1)-th successor of *x, divided by
// 2^46 (the same as n calls of randlc); *x is left at the last one.
void vranlc(int n, double* x, double a, double* y);

// Returns a^exponent mod 2^46 (exponent >= 0), the multiplier that jumps a stream
// forward by `exponent` steps: randlc(&x, npb_power(a, k)) equals k calls of randlc(&x, a).
double npb_power(double a, long long exponent);

// The same generator on integers, for code that keeps its state as uint64 in hot loops.
inline constexpr std::uint64_t kMod46Mask = (std::uint64_t{1} << 46) - 1;
inline constexpr double kTwoToMinus46 = 1.0 / 70368744177664.0;  // 2^-46

// a * x mod 2^46 on integers below 2^46.
inline std::uint64_t mul_mod46(std::uint64_t a, std::uint64_t x) { return (a * x) & kMod46Mask; }

}  // namespace nas
