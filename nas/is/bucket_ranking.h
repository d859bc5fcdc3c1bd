// nas/is/bucket_ranking.h: NPB IS's ranking on BSPlib, as a distributed bucket sort.
// The key space [0, MAX_KEY) is cut into NUM_BUCKETS buckets (top bits of the key). Each
// ranking takes two supersteps:
//   1. every process counts its keys per bucket and all-gathers the counts (together
//      with a few extra ints the caller wants shared, e.g. verification keys); from the
//      global counts every process derives the same assignment of contiguous bucket
//      ranges to processes, each holding about TOTAL_KEYS / p keys;
//   2. every process groups its keys by bucket and hpputs, in one message per
//      destination, the keys of each process's bucket range straight into that
//      process's receive area, at an offset computed from the counts of the lower pids.
//      A key travels as its offset inside its bucket (16 bits; the low bits of the key):
//      the receiver knows from the gathered counts how many keys of each bucket every
//      sender put where, so the bucket (the high bits) need not travel. Half NPB's bytes.
// Then each process counts its received keys over its key range and prefix-sums them,
// adding the number of keys held by lower processes: rank_table()[k - key_begin()] is
// the number of keys <= k in the whole sequence.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "nas/common/huge_buffer.h"

namespace nas::is {

class BucketRanking {
 public:
  // Collective (registers the receive area: one bsp_sync). keys_per_process: the most
  // keys any process holds; shared_ints: how many ints rank() all-gathers per process.
  BucketRanking(int max_key_log2, int buckets_log2, std::int64_t total_keys, int keys_per_process, int shared_ints);
  ~BucketRanking();
  BucketRanking(const BucketRanking&) = delete;
  BucketRanking& operator=(const BucketRanking&) = delete;

  // Collective. Ranks the global key sequence given this process's keys. shared: this
  // process's shared_ints values; afterwards shared_all() holds every process's, by pid.
  void rank(const int* keys, int count, const int* shared);

  const std::vector<int>& shared_all() const { return shared_all_; }
  // This process's key range [key_begin, key_end) after rank().
  int key_begin() const { return key_begin_; }
  int key_end() const { return key_end_; }
  // Global ranks for this key range (see the file comment).
  std::span<const int> rank_table() const {
    return {rank_table_.data(), static_cast<std::size_t>(key_end_ - key_begin_)};
  }
  // The keys this process received (all in its key range), rebuilt from their offsets
  // (for verification; not a hot path), and how many.
  std::vector<int> received_keys() const;
  int received_count() const { return received_count_; }
  // Number of keys held by lower processes (the rank offset of this process's range).
  std::int64_t keys_below() const { return keys_below_; }

 private:
  int shift_;  // key >> shift_ = bucket
  int buckets_;
  std::int64_t total_keys_;
  int shared_ints_;
  std::vector<int> exchange_;  // my bucket counts + shared ints
  std::vector<int> gathered_;  // everyone's exchange_, by pid
  std::vector<int> shared_all_;
  std::vector<int> bucket_owner_;  // owner pid of each bucket
  std::vector<int> bucket_start_;  // where each bucket starts in send_
  // The large arrays are on huge pages: the scatter of keys into 2^buckets_log2 write
  // streams and the counting into the rank table touch pages all over them (TLB misses
  // on 4 KiB pages), and send_ is the hp-puts' source (one copy over shm from huge pages).
  HugeBuffer<std::uint16_t> send_;         // my keys grouped by bucket, as offsets in it
  HugeBuffer<std::uint16_t> receive_;      // registered receive area, the same
  HugeBuffer<int> rank_table_;             // room for the whole key range
  std::vector<std::int64_t> offset_at_;    // per destination: where my keys land there
  std::vector<std::uint16_t*> write_at_;   // per bucket: where its next key of mine goes
  int first_bucket_ = 0, end_bucket_ = 0;  // my bucket range after rank()
  int received_count_ = 0;
  int key_begin_ = 0, key_end_ = 0;
  std::int64_t keys_below_ = 0;
};

}  // namespace nas::is
