// nas/ep/ep.cc: NPB EP ("embarrassingly parallel") on BSPlib. 2^(M+1) uniform numbers of
// the NPB stream (seed 271828183, multiplier 5^13) are taken in pairs; each pair inside
// the unit circle becomes a pair of Gaussian deviates by the Marsaglia polar method, and
// the benchmark sums the deviates and counts them in square annuli. The 2^(M-16) batches
// of 2^16 pairs are split into contiguous ranges, one per process; every batch starts
// its own part of the stream by a jump-ahead, so there is no communication until the
// single reduction superstep at the end. Verified against the official NPB sums.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "bsplib/bsp.h"
#include "nas/common/collectives.h"
#include "nas/common/options.h"
#include "nas/common/problem_class.h"
#include "nas/common/randlc.h"
#include "nas/common/region_timer.h"
#include "nas/common/report.h"
#include "nas/common/verification.h"

namespace {

constexpr int kBatchLog2 = 16;  // MK: 2^16 pairs per batch
constexpr int kPairsPerBatch = 1 << kBatchLog2;
constexpr int kAnnuli = 10;  // NQ
constexpr double kSeed = 271828183.0;
constexpr double kEpsilon = 1.0e-8;

struct EpClass {
  int m;          // 2^m pairs in total
  double sx, sy;  // official sums of the deviates
};

const nas::ClassTable<EpClass> kClasses = {
    {'S', {24, -3.247834652034740e3, -6.958407078382297e3}}, {'W', {25, -2.863319731645753e3, -6.320053679109499e3}},
    {'A', {28, -4.295875165629892e3, -1.580732573678431e4}}, {'B', {30, 4.033815542441498e4, -2.660669192809235e4}},
    {'C', {32, 4.764367927995374e4, -8.084072988043731e4}},
};

// Running sums of one process: the deviate sums and the annulus counts.
struct Tallies {
  double sx = 0, sy = 0;
  double counts[kAnnuli] = {};
};

// Generates batch `batch` (pairs batch*2^16 ... +2^16-1) and adds its deviates to t.
// uniforms: scratch of 2 * kPairsPerBatch doubles.
void run_batch(long long batch, double* uniforms, Tallies& t) {
  double state = kSeed;
  nas::randlc(&state, nas::npb_power(nas::kNpbMultiplier, 2LL * kPairsPerBatch * batch));
  nas::vranlc(2 * kPairsPerBatch, &state, nas::kNpbMultiplier, uniforms);
  // Counts in two integer tables taken in turn: consecutive pairs mostly land in the
  // same annulus, and one table would chain every increment through the same memory word.
  double sx = 0, sy = 0;
  std::int64_t counts[2][kAnnuli] = {};
  for (int i = 0; i < kPairsPerBatch; ++i) {
    double x1 = 2.0 * uniforms[2 * i] - 1.0;
    double x2 = 2.0 * uniforms[2 * i + 1] - 1.0;
    double radius2 = x1 * x1 + x2 * x2;
    if (radius2 <= 1.0) {
      double factor = std::sqrt(-2.0 * std::log(radius2) / radius2);
      double g1 = x1 * factor, g2 = x2 * factor;
      int annulus = static_cast<int>(std::max(std::fabs(g1), std::fabs(g2)));
      ++counts[i & 1][annulus];
      sx += g1;
      sy += g2;
    }
  }
  for (int q = 0; q < kAnnuli; ++q) t.counts[q] += static_cast<double>(counts[0][q] + counts[1][q]);
  t.sx += sx;
  t.sy += sy;
}

int ep_main(int argc, char** argv) {
  nas::NpbOptions options = nas::parse_npb_options(argc, argv, "ep", kClasses.letters());
  const EpClass& params = kClasses.at(options.problem_class);
  const int p = bsp_nprocs(), me = bsp_pid();
  const long long batches = 1LL << (params.m - kBatchLog2);
  const long long per_process = batches / p, extra = batches % p;
  const long long first = me * per_process + std::min<long long>(me, extra);
  const long long count = per_process + (me < extra ? 1 : 0);

  nas::print_banner("EP", options.problem_class, std::to_string(2LL << params.m) + " random numbers");
  std::vector<double> uniforms(2 * kPairsPerBatch);
  Tallies tallies;
  nas::RegionTimer timer;
  bsp_sync();
  timer.start();
  for (long long b = first; b < first + count; ++b) run_batch(b, uniforms.data(), tallies);
  double sums[2 + kAnnuli] = {tallies.sx, tallies.sy};
  std::copy(tallies.counts, tallies.counts + kAnnuli, sums + 2);
  nas::all_reduce_sum(sums, 2 + kAnnuli);
  timer.stop();

  double sx_reference = nas::reference_value(params.sx, options);
  double sy_reference = nas::reference_value(params.sy, options);
  bool sx_ok = nas::within_relative(sums[0], sx_reference, kEpsilon);
  bool sy_ok = nas::within_relative(sums[1], sy_reference, kEpsilon);
  if (me == 0) {
    double pairs = 0;
    for (int q = 0; q < kAnnuli; ++q) pairs += sums[2 + q];
    std::printf(" Gaussian pairs = %15.0f\n Counts:\n", pairs);
    for (int q = 0; q < kAnnuli; ++q) std::printf(" %3d %15.0f\n", q, sums[2 + q]);
  }
  nas::print_check("sum x", sums[0], sx_reference, sx_ok);
  nas::print_check("sum y", sums[1], sy_reference, sy_ok);

  nas::BenchmarkResult result;
  result.name = "EP";
  result.problem_class = options.problem_class;
  result.size = std::to_string(2LL << params.m);
  result.iterations = 0;
  result.operations = std::ldexp(1.0, params.m + 1);
  result.operation_type = "Random numbers generated";
  result.verified = sx_ok && sy_ok;
  return nas::report_results(result, timer);
}

}  // namespace

int main(int argc, char** argv) {
  bsp_begin(bsp_nprocs());
  int status = ep_main(argc, argv);
  bsp_end();
  return status;
}
