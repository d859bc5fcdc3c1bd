// nas/is/is_cpp.cc: NPB IS written on the C++ interface (bsp/bsp.hpp): the same keys, the
// same two-superstep bucket ranking and the same verification as nas/is/is.cc, with
// bsp::coarray for the counts' all-gather and the receive area, bsp::sum and
// bsp::gather_all for verification. Compared with the C version in docs/figures.md.
// Usage: bsprun -n P bazel-bin/nas/is_cpp --class=S|W|A|B|C
#include <bsp/bsp.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "nas/common/options.h"
#include "nas/common/problem_class.h"
#include "nas/common/region_timer.h"
#include "nas/common/report.h"
#include "nas/common/verification.h"
#include "nas/is/is_classes.h"
#include "nas/is/key_generation.h"

namespace {

using nas::is::expected_rank;
using nas::is::IsClass;
using nas::is::kClasses;
using nas::is::kIterations;
using nas::is::kTests;

// The distributed bucket sort of nas/is/bucket_ranking.h, on coarrays.
class Ranking {
 public:
  Ranking(bsp::world& world, int max_key_log2, int buckets_log2, std::int64_t total_keys, std::size_t keys_per_process)
      : world_(world),
        shift_(max_key_log2 - buckets_log2),
        buckets_(1 << buckets_log2),
        total_keys_(total_keys),
        stride_(static_cast<std::size_t>(buckets_ + kTests)),
        exchange_(stride_),
        gathered_(world, static_cast<std::size_t>(world.size()) * stride_),
        receive_(world,
                 std::min<std::size_t>(static_cast<std::size_t>(total_keys), keys_per_process + keys_per_process / 2)),
        owner_(static_cast<std::size_t>(buckets_)),
        start_(static_cast<std::size_t>(buckets_) + 1),
        send_(keys_per_process),
        write_at_(static_cast<std::size_t>(buckets_)) {}

  // Ranks the keys; shared (kTests ints) is all-gathered with the counts.
  void rank(std::span<const int> keys, const std::array<int, kTests>& shared) {
    const int p = world_.size(), me = world_.rank();
    const int shift = shift_;
    std::fill(exchange_.begin(), exchange_.begin() + buckets_, 0);
    int* counts = exchange_.data();
    for (int key : keys) ++counts[key >> shift];
    std::copy(shared.begin(), shared.end(), exchange_.begin() + buckets_);
    // Superstep 1: the counts to everyone (from the next rank on, so that no rank is
    // everyone's first destination; its own slot is a local copy).
    const std::size_t at = static_cast<std::size_t>(me) * stride_;
    for (int k = 1; k < p; ++k) gathered_((me + k) % p)[{at, at + stride_}] = std::span<const int>(exchange_);
    std::copy(exchange_.begin(), exchange_.end(), gathered_.begin() + at);
    world_.sync();
    const int* all = gathered_.data();

    std::int64_t before = 0;
    keys_below_ = 0;
    int first = buckets_, end = 0;
    for (int b = 0; b < buckets_; ++b) {
      std::int64_t size = 0;
      for (int q = 0; q < p; ++q) size += all[static_cast<std::size_t>(q) * stride_ + b];
      int owner = static_cast<int>(std::min<std::int64_t>(p - 1, before * p / total_keys_));
      owner_[b] = owner;
      if (owner < me) keys_below_ += size;
      if (owner == me) first = std::min(first, b), end = b + 1;
      before += size;
    }
    if (first > end) first = end = 0;
    key_begin_ = first << shift_;
    key_end_ = end << shift_;

    offset_at_.assign(static_cast<std::size_t>(p), 0);
    std::size_t incoming = 0;
    for (int b = 0; b < buckets_; ++b) {
      for (int q = 0; q < me; ++q) offset_at_[owner_[b]] += static_cast<std::size_t>(all[q * stride_ + b]);
      if (owner_[b] == me)
        for (int q = 0; q < p; ++q) incoming += static_cast<std::size_t>(all[q * stride_ + b]);
    }
    if (incoming > receive_.size()) {
      world_.abort("is_cpp: rank %d would receive %zu keys, more than its room for %zu", me, incoming, receive_.size());
    }
    received_ = incoming;

    start_[0] = 0;
    for (int b = 0; b < buckets_; ++b) start_[b + 1] = start_[b] + counts[b];
    const int own_base = first < end ? start_[first] : 0;
    for (int b = 0; b < buckets_; ++b) {
      write_at_[b] = owner_[b] == me ? receive_.data() + offset_at_[me] + (start_[b] - own_base)
                                     : send_.data() + start_[b];
    }
    int** write_at = write_at_.data();
    for (int key : keys) *write_at[key >> shift]++ = key;

    // Superstep 2: each other destination's bucket range as one unbuffered put.
    for (int k = 1; k < p; ++k) {
      const int dest = (me + k) % p;
      int begin = buckets_, stop = 0;
      for (int b = 0; b < buckets_; ++b) {
        if (owner_[b] != dest) continue;
        begin = std::min(begin, b);
        stop = b + 1;
      }
      if (begin >= stop) continue;
      const std::size_t n = static_cast<std::size_t>(start_[stop] - start_[begin]);
      if (n == 0) continue;
      const std::size_t there = offset_at_[dest];
      receive_(dest)[{there, there + n}].put_unbuffered(std::span<const int>(send_.data() + start_[begin], n));
    }
    world_.sync();

    const int range = key_end_ - key_begin_, key_begin = key_begin_;
    table_.assign(static_cast<std::size_t>(range), 0);
    int* table = table_.data();
    const int* received = receive_.data();
    for (std::size_t i = 0; i < received_; ++i) ++table[received[i] - key_begin];
    int running = static_cast<int>(keys_below_);
    for (int k = 0; k < range; ++k) table[k] = running += table[k];
  }

  // Every rank's shared ints of the last ranking, by rank.
  int shared_of(int q, int t) const { return gathered_.data()[static_cast<std::size_t>(q) * stride_ + buckets_ + t]; }
  int key_begin() const { return key_begin_; }
  int key_end() const { return key_end_; }
  const std::vector<int>& table() const { return table_; }
  std::span<const int> received() const { return {receive_.data(), received_}; }
  std::int64_t keys_below() const { return keys_below_; }

 private:
  bsp::world& world_;
  int shift_, buckets_;
  std::int64_t total_keys_;
  std::size_t stride_;
  std::vector<int> exchange_;
  bsp::coarray<int> gathered_, receive_;
  std::vector<int> owner_, start_, send_, table_;
  std::vector<std::size_t> offset_at_;
  std::vector<int*> write_at_;
  std::size_t received_ = 0;
  int key_begin_ = 0, key_end_ = 0;
  std::int64_t keys_below_ = 0;
};

int is_main(bsp::world& world, int argc, char** argv) {
  nas::NpbOptions options = nas::parse_npb_options(argc, argv, "is", kClasses.letters());
  const IsClass& params = kClasses.at(options.problem_class);
  const int p = world.size(), me = world.rank();
  const std::int64_t total_keys = std::int64_t{1} << params.total_keys_log2;
  const int max_key = 1 << params.max_key_log2;
  nas::print_banner("IS (C++ interface)", options.problem_class, std::to_string(total_keys) + " keys");

  const std::int64_t first = total_keys * me / p, last = total_keys * (me + 1) / p;
  std::vector<int> keys(static_cast<std::size_t>(last - first));
  nas::is::generate_keys(first, static_cast<int>(keys.size()), max_key, keys.data());
  Ranking ranking(world, params.max_key_log2, params.buckets_log2, total_keys,
                  static_cast<std::size_t>((total_keys + p - 1) / p));

  auto rank_iteration = [&](int iteration) {
    for (std::int64_t index : {std::int64_t{iteration}, std::int64_t{iteration} + kIterations}) {
      if (index >= first && index < last) keys[index - first] = index == iteration ? iteration : max_key - iteration;
    }
    std::array<int, kTests> test_keys;
    for (int t = 0; t < kTests; ++t) {
      std::int64_t index = params.test_index[t];
      test_keys[t] = index >= first && index < last ? keys[index - first] : -1;
    }
    ranking.rank(keys, test_keys);
  };
  auto check_ranks = [&](int iteration) {
    int passed = 0;
    for (int t = 0; t < kTests; ++t) {
      int key = -1;
      for (int q = 0; q < p; ++q) key = std::max(key, ranking.shared_of(q, t));
      if (key < 1 || key - 1 < ranking.key_begin() || key - 1 >= ranking.key_end()) continue;
      std::int64_t rank = ranking.table()[key - 1 - ranking.key_begin()];
      std::int64_t expected = expected_rank(options.problem_class, t, iteration,
                                            nas::reference_value(params.test_rank[t], options));
      if (rank == expected) {
        ++passed;
      } else {
        std::printf(" Failed partial verification: iteration %d, test key %d, rank %lld, expected %lld\n", iteration, t,
                    static_cast<long long>(rank), static_cast<long long>(expected));
      }
    }
    return passed;
  };

  rank_iteration(1);
  std::int64_t passed = 0;
  nas::RegionTimer timer;
  world.sync();
  timer.start();
  for (int iteration = 1; iteration <= kIterations; ++iteration) {
    rank_iteration(iteration);
    passed += check_ranks(iteration);
  }
  timer.stop();

  // Full verification: the received keys sorted by their ranks, in order here and across ranks.
  std::span<const int> received = ranking.received();
  std::vector<int> next_slot(ranking.table()), sorted(received.size());
  for (int key : received) sorted[--next_slot[key - ranking.key_begin()] - ranking.keys_below()] = key;
  std::int64_t unsorted = 0;
  for (std::size_t i = 1; i < sorted.size(); ++i) unsorted += sorted[i - 1] > sorted[i];
  struct Ends {
    int any, front, back;
  };
  std::vector<Ends> ends = bsp::gather_all(
      world, Ends{!sorted.empty(), sorted.empty() ? 0 : sorted.front(), sorted.empty() ? 0 : sorted.back()});
  if (me == 0) {
    int previous_last = -1;
    for (const Ends& e : ends) {
      if (!e.any) continue;
      unsorted += e.front < previous_last;
      previous_last = e.back;
    }
  }
  unsorted = bsp::sum(world, unsorted);
  passed = bsp::sum(world, passed);
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
  int status = 0;
  bsp::run(argc, argv, [&](bsp::world& world) { status = is_main(world, argc, argv); });
  return status;
}
