// nas/is/bucket_ranking.cc: the distributed bucket-sort ranking (see bucket_ranking.h).
#include "nas/is/bucket_ranking.h"

#include <algorithm>

#include "bsplib/bsp.h"
#include "nas/common/collectives.h"

namespace nas::is {

BucketRanking::BucketRanking(int max_key_log2, int buckets_log2, std::int64_t total_keys, int keys_per_process,
                             int shared_ints)
    : shift_(max_key_log2 - buckets_log2),
      buckets_(1 << buckets_log2),
      total_keys_(total_keys),
      shared_ints_(shared_ints),
      exchange_(buckets_ + shared_ints),
      gathered_(static_cast<std::size_t>(bsp_nprocs()) * (buckets_ + shared_ints)),
      shared_all_(static_cast<std::size_t>(bsp_nprocs()) * shared_ints),
      bucket_owner_(buckets_),
      bucket_start_(buckets_ + 1),
      send_(keys_per_process),
      rank_table_(std::size_t(1) << max_key_log2) {
  if (shift_ > 16)
    bsp_abort("is: buckets of 2^%d keys do not fit the 16-bit offsets keys travel as (max key 2^%d, 2^%d buckets)\n",
              shift_, max_key_log2, buckets_log2);
  // Room for this process's share plus half again: a range of whole buckets can exceed
  // TOTAL_KEYS / p by up to one bucket, far less than that for NPB's key distribution.
  std::int64_t capacity = std::min<std::int64_t>(total_keys, keys_per_process + keys_per_process / 2);
  receive_ = HugeBuffer<std::uint16_t>(capacity);
  bsp_push_reg(receive_.data(), static_cast<int>(capacity * sizeof(std::uint16_t)));
  bsp_sync();
}

BucketRanking::~BucketRanking() { bsp_pop_reg(receive_.data()); }

void BucketRanking::rank(const int* keys, int count, const int* shared) {
  const int p = bsp_nprocs(), me = bsp_pid();
  const int stride = buckets_ + shared_ints_;

  // Superstep 1: bucket counts (and the caller's shared ints) to everyone.
  // Members are copied into locals in the hot loops: stores through int* could alias
  // them, which would make the compiler reload them on every key.
  const int shift = shift_;
  int* my_counts = exchange_.data();
  std::fill(my_counts, my_counts + buckets_, 0);
  for (int i = 0; i < count; ++i) ++my_counts[keys[i] >> shift];
  std::copy(shared, shared + shared_ints_, exchange_.begin() + buckets_);
  all_gather(exchange_.data(), stride * static_cast<int>(sizeof(int)), gathered_.data());
  for (int q = 0; q < p; ++q)
    std::copy(gathered_.begin() + q * stride + buckets_, gathered_.begin() + (q + 1) * stride,
              shared_all_.begin() + q * shared_ints_);

  // The same bucket-to-process assignment everywhere: bucket b goes to the process whose
  // share [q N/p, (q+1) N/p) contains the number of keys in buckets before b.
  std::int64_t before = 0;
  keys_below_ = 0;
  int first_bucket = buckets_, end_bucket = 0;
  for (int b = 0; b < buckets_; ++b) {
    std::int64_t size = 0;
    for (int q = 0; q < p; ++q) size += gathered_[q * stride + b];
    int owner = static_cast<int>(std::min<std::int64_t>(p - 1, before * p / total_keys_));
    bucket_owner_[b] = owner;
    if (owner < me) keys_below_ += size;
    if (owner == me) {
      first_bucket = std::min(first_bucket, b);
      end_bucket = b + 1;
    }
    before += size;
  }
  if (first_bucket > end_bucket) first_bucket = end_bucket = 0;
  first_bucket_ = first_bucket;
  end_bucket_ = end_bucket;
  key_begin_ = first_bucket << shift_;
  key_end_ = end_bucket << shift_;

  // Offsets: where my keys of each destination's buckets go there (after the keys of
  // the lower pids), and how many keys I receive in all.
  std::vector<std::int64_t>& offset_at = offset_at_;
  offset_at.assign(p, 0);
  std::int64_t incoming = 0;
  for (int b = 0; b < buckets_; ++b) {
    const int owner = bucket_owner_[b];
    for (int q = 0; q < me; ++q) offset_at[owner] += gathered_[q * stride + b];
    if (owner == me)
      for (int q = 0; q < p; ++q) incoming += gathered_[q * stride + b];
  }
  if (incoming > static_cast<std::int64_t>(receive_.size()))
    bsp_abort("is: process %d would receive %lld keys, more than its buffer of %zu\n", me,
              static_cast<long long>(incoming), receive_.size());
  received_count_ = static_cast<int>(incoming);

  // Group my keys by bucket in one pass: keys of other processes' buckets into send_,
  // keys of my own buckets straight into my place in receive_ (no copy at p = 1).
  bucket_start_[0] = 0;
  for (int b = 0; b < buckets_; ++b) bucket_start_[b + 1] = bucket_start_[b] + my_counts[b];
  write_at_.resize(buckets_);
  {
    const int own_base = first_bucket < end_bucket ? bucket_start_[first_bucket] : 0;
    for (int b = 0; b < buckets_; ++b)
      write_at_[b] = bucket_owner_[b] == me ? receive_.data() + offset_at[me] + (bucket_start_[b] - own_base)
                                            : send_.data() + bucket_start_[b];
    std::uint16_t** write_at = write_at_.data();
    const int mask = (1 << shift) - 1;
    for (int i = 0; i < count; ++i) {
      const int key = keys[i];
      *write_at[key >> shift]++ = static_cast<std::uint16_t>(key & mask);
    }
  }

  // Superstep 2: each other destination's bucket range, as one message.
  for (int k = 1; k < p; ++k) {
    const int dest = (me + k) % p;
    int begin = buckets_, end = 0;
    for (int b = 0; b < buckets_; ++b) {
      if (bucket_owner_[b] != dest) continue;
      begin = std::min(begin, b);
      end = b + 1;
    }
    if (begin >= end) continue;
    const int nkeys = bucket_start_[end] - bucket_start_[begin];
    if (nkeys == 0) continue;
    bsp_hpput(dest, send_.data() + bucket_start_[begin], receive_.data(),
              static_cast<int>(offset_at[dest] * sizeof(std::uint16_t)),
              static_cast<int>(nkeys * sizeof(std::uint16_t)));
  }
  bsp_sync();

  // Local ranks over my key range, offset by the keys of lower processes. The receive
  // area holds, sender by sender, each of my buckets' keys of that sender in turn.
  const int range = key_end_ - key_begin_;
  int* table = rank_table_.data();
  std::fill(table, table + range, 0);
  const std::uint16_t* received = receive_.data();
  for (int q = 0; q < p; ++q)
    for (int b = first_bucket; b < end_bucket; ++b) {
      int* bucket_table = table + ((b - first_bucket) << shift);
      const int n = gathered_[q * stride + b];
      for (int i = 0; i < n; ++i) ++bucket_table[received[i]];
      received += n;
    }
  int running = static_cast<int>(keys_below_);
  for (int k = 0; k < range; ++k) {
    running += table[k];
    table[k] = running;
  }
}

std::vector<int> BucketRanking::received_keys() const {
  std::vector<int> keys;
  keys.reserve(received_count_);
  const int p = bsp_nprocs(), stride = buckets_ + shared_ints_;
  const std::uint16_t* received = receive_.data();
  for (int q = 0; q < p; ++q)
    for (int b = first_bucket_; b < end_bucket_; ++b) {
      const int n = gathered_[q * stride + b];
      for (int i = 0; i < n; ++i) keys.push_back((b << shift_) + received[i]);
      received += n;
    }
  return keys;
}

}  // namespace nas::is
