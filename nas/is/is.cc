// nas/is/is.cc: NPB IS (integer sort) on BSPlib: ranks TOTAL_KEYS integer keys in
// [0, MAX_KEY) ten times, changing two keys before each ranking, with a distributed bucket
// sort (nas/is/bucket_ranking.h, two supersteps per ranking). Verification as NPB
// defines it: after each ranking the ranks of five test keys are compared with the
// official values (partial verification), and after the last one the keys are sorted by
// their ranks and checked to be in order across all processes (full verification).
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "bsplib/bsp.h"
#include "nas/common/collectives.h"
#include "nas/common/options.h"
#include "nas/common/problem_class.h"
#include "nas/common/region_timer.h"
#include "nas/common/report.h"
#include "nas/common/verification.h"
#include "nas/is/bucket_ranking.h"
#include "nas/is/is_classes.h"
#include "nas/is/key_generation.h"

namespace {

using nas::is::expected_rank;
using nas::is::IsClass;
using nas::is::kClasses;
using nas::is::kIterations;
using nas::is::kTests;

// Partial verification of one ranking: every test key is checked by the process whose
// key range holds key - 1. Returns how many checks passed here.
int check_test_ranks(const nas::is::BucketRanking& ranking, const IsClass& params, const nas::NpbOptions& options,
                     int iteration) {
  const int p = bsp_nprocs();
  int passed = 0;
  for (int t = 0; t < kTests; ++t) {
    int key = -1;
    for (int q = 0; q < p; ++q) key = std::max(key, ranking.shared_all()[q * kTests + t]);
    if (key < 1 || key - 1 < ranking.key_begin() || key - 1 >= ranking.key_end()) continue;
    std::int64_t rank = ranking.rank_table()[key - 1 - ranking.key_begin()];
    std::int64_t official = nas::reference_value(params.test_rank[t], options);
    std::int64_t expected = expected_rank(options.problem_class, t, iteration, official);
    if (rank == expected) ++passed;
    else
      std::printf(" Failed partial verification: iteration %d, test key %d, rank %lld, expected %lld\n", iteration, t,
                  static_cast<long long>(rank), static_cast<long long>(expected));
  }
  return passed;
}

// Full verification: every process sorts its received keys by their ranks, checks them,
// and the processes' first and last keys are checked to be in order across pids.
// Collective; returns the number of keys out of order in the whole sequence.
std::int64_t count_unsorted(const nas::is::BucketRanking& ranking) {
  const int n = ranking.received_count();
  const std::vector<int> keys = ranking.received_keys();
  const std::span<const int> table = ranking.rank_table();
  std::vector<int> next_slot(table.begin(), table.end());  // one past the last slot of each key
  std::vector<int> sorted(n);
  const std::int64_t below = ranking.keys_below();
  for (int i = 0; i < n; ++i) sorted[--next_slot[keys[i] - ranking.key_begin()] - below] = keys[i];
  std::int64_t unsorted = 0;
  for (int i = 1; i < n; ++i)
    if (sorted[i - 1] > sorted[i]) ++unsorted;
  int ends[3] = {n > 0 ? 1 : 0, n > 0 ? sorted.front() : 0, n > 0 ? sorted.back() : 0};
  std::vector<int> all_ends(3 * bsp_nprocs());
  nas::all_gather(ends, sizeof ends, all_ends.data());
  if (bsp_pid() == 0) {
    int previous_last = -1;
    for (int q = 0; q < bsp_nprocs(); ++q) {
      if (!all_ends[3 * q]) continue;
      if (all_ends[3 * q + 1] < previous_last) ++unsorted;
      previous_last = all_ends[3 * q + 2];
    }
  }
  nas::all_reduce_sum(&unsorted, 1);
  return unsorted;
}

int is_main(int argc, char** argv) {
  nas::NpbOptions options = nas::parse_npb_options(argc, argv, "is", kClasses.letters());
  const IsClass& params = kClasses.at(options.problem_class);
  const int p = bsp_nprocs(), me = bsp_pid();
  const std::int64_t total_keys = std::int64_t{1} << params.total_keys_log2;
  const int max_key = 1 << params.max_key_log2;
  nas::print_banner("IS", options.problem_class, std::to_string(total_keys) + " keys");

  // This process's contiguous index range of the key sequence.
  const std::int64_t first = total_keys * me / p, last = total_keys * (me + 1) / p;
  const int count = static_cast<int>(last - first);
  std::vector<int> keys(count);
  nas::is::generate_keys(first, count, max_key, keys.data());
  nas::is::BucketRanking ranking(params.max_key_log2, params.buckets_log2, total_keys,
                                 static_cast<int>((total_keys + p - 1) / p), kTests);

  // One ranking of NPB's rank(iteration): change two keys, note the test keys, rank.
  auto rank_iteration = [&](int iteration) {
    for (std::int64_t index : {std::int64_t{iteration}, std::int64_t{iteration} + kIterations}) {
      if (index >= first && index < last) keys[index - first] = index == iteration ? iteration : max_key - iteration;
    }
    int test_keys[kTests];
    for (int t = 0; t < kTests; ++t) {
      std::int64_t index = params.test_index[t];
      test_keys[t] = index >= first && index < last ? keys[index - first] : -1;
    }
    ranking.rank(keys.data(), count, test_keys);
  };

  rank_iteration(1);  // untimed, as in NPB: touches every page and code path
  std::int64_t passed = 0;
  nas::RegionTimer timer;
  bsp_sync();
  timer.start();
  for (int iteration = 1; iteration <= kIterations; ++iteration) {
    rank_iteration(iteration);
    passed += check_test_ranks(ranking, params, options, iteration);
  }
  timer.stop();

  std::int64_t unsorted = count_unsorted(ranking);
  nas::all_reduce_sum(&passed, 1);
  if (unsorted == 0) ++passed;
  if (me == 0) {
    std::printf(" Partial verification: %lld of %d test-key ranks correct\n",
                static_cast<long long>(passed - (unsorted == 0 ? 1 : 0)), kTests * kIterations);
    std::printf(" Full verification: %lld keys out of order\n", static_cast<long long>(unsorted));
  }

  nas::BenchmarkResult result;
  result.name = "IS";
  result.problem_class = options.problem_class;
  result.size = std::to_string(total_keys);
  result.iterations = kIterations;
  result.operations = static_cast<double>(kIterations) * static_cast<double>(total_keys);
  result.operation_type = "keys ranked";
  result.verified = passed == kTests * kIterations + 1;
  return nas::report_results(result, timer);
}

}  // namespace

int main(int argc, char** argv) {
  bsp_begin(bsp_nprocs());
  int status = is_main(argc, argv);
  bsp_end();
  return status;
}
