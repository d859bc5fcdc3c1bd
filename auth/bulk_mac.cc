// auth/bulk_mac.cc: 16-lane SipHash-2-4 for long payloads (see bulk_mac.h). The lanes are
// two GCC vectors of 8 64-bit words, hashed round by round in turn so that their chains
// overlap: an AVX-512 register each where the processor has it, two AVX2 registers or
// four SSE2 ones each elsewhere (target_clones picks at load time).
#include "auth/bulk_mac.h"

#include <sodium.h>

#include <cstring>
#include <string>
#include <string_view>

// The lanes cross only inlined helpers, so no ABI is involved. They go in by reference
// because GCC prints a note for a 64-byte vector passed by value that this pragma does not
// silence; the pragma covers the warning for returning one (finish).
#pragma GCC diagnostic ignored "-Wpsabi"

namespace bsp::auth {
namespace {

// Half the lanes: one 64-byte piece of a 128-byte block.
using Lanes = std::uint64_t __attribute__((vector_size(64)));
constexpr std::size_t kHalf = kLanes / 2;
constexpr std::size_t kBlock = 2 * sizeof(Lanes);

constexpr std::uint64_t kInit0 = 0x736f6d6570736575ull, kInit1 = 0x646f72616e646f6dull, kInit2 = 0x6c7967656e657261ull,
                        kInit3 = 0x7465646279746573ull;

std::uint64_t load64(const void* at) {
  std::uint64_t value;
  std::memcpy(&value, at, 8);
  return value;
}

template <typename T>
[[gnu::always_inline]] inline T rotl(const T& x, int b) {
  return (x << b) | (x >> (64 - b));
}

template <typename T>
[[gnu::always_inline]] inline void sip_round(T& v0, T& v1, T& v2, T& v3) {
  v0 += v1;
  v1 = rotl(v1, 13);
  v1 ^= v0;
  v0 = rotl(v0, 32);
  v2 += v3;
  v3 = rotl(v3, 16);
  v3 ^= v2;
  v0 += v3;
  v3 = rotl(v3, 21);
  v3 ^= v0;
  v2 += v1;
  v1 = rotl(v1, 17);
  v1 ^= v2;
  v2 = rotl(v2, 32);
}

// SipHash-2-4's state, for one lane (T = std::uint64_t) or eight side by side (T = Lanes).
template <typename T>
struct SipState {
  T v0, v1, v2, v3;
  [[gnu::always_inline]] SipState(const T& k0, const T& k1)
      : v0(k0 ^ kInit0), v1(k1 ^ kInit1), v2(k0 ^ kInit2), v3(k1 ^ kInit3) {}
  [[gnu::always_inline]] void absorb(const T& m) {
    v3 ^= m;
    sip_round(v0, v1, v2, v3);
    sip_round(v0, v1, v2, v3);
    v0 ^= m;
  }
  // The tag after `words` whole 8-byte words: the length byte, no tail.
  [[gnu::always_inline]] T finish(std::size_t words) {
    const std::uint64_t last = static_cast<std::uint64_t>(words * 8) << 56;
    absorb(T{} + last);
    v2 ^= 0xff;
    for (int i = 0; i < 4; ++i) sip_round(v0, v1, v2, v3);
    return v0 ^ v1 ^ v2 ^ v3;
  }
};

// The compression of every 128-byte block and the finalisation of SipHash-2-4, lane by
// lane: words 0-7 of a block to lanes 0-7 (state a), words 8-15 to lanes 8-15 (state b).
// blocks: 128-byte blocks at data; tags receives the 16 lane tags; fold the XOR of the
// blocks' 64-byte pieces. With copy_to, each block is also stored there as it is hashed
// (bulk_mac_copy: the copy rides on the hashing).
__attribute__((target_clones("avx512f", "avx2", "default"))) void lane_tags(const BulkKey& key, const std::byte* data,
                                                                            std::size_t blocks, std::uint64_t* tags,
                                                                            std::byte* copy_to, Fold& fold) {
  Lanes ka0, ka1, kb0, kb1;
  for (std::size_t l = 0; l < kHalf; ++l) {
    ka0[l] = load64(key.lanes[l].data());
    ka1[l] = load64(key.lanes[l].data() + 8);
    kb0[l] = load64(key.lanes[kHalf + l].data());
    kb1[l] = load64(key.lanes[kHalf + l].data() + 8);
  }
  SipState<Lanes> a(ka0, ka1), b(kb0, kb1);
  Lanes folded{};
  for (std::size_t i = 0; i < blocks; ++i) {
    Lanes m, n;
    std::memcpy(&m, data + i * kBlock, sizeof(Lanes));
    std::memcpy(&n, data + i * kBlock + sizeof(Lanes), sizeof(Lanes));
    if (copy_to != nullptr) {
      std::memcpy(copy_to + i * kBlock, &m, sizeof(Lanes));
      std::memcpy(copy_to + i * kBlock + sizeof(Lanes), &n, sizeof(Lanes));
    }
    folded ^= m ^ n;
    a.v3 ^= m;
    b.v3 ^= n;
    sip_round(a.v0, a.v1, a.v2, a.v3);
    sip_round(b.v0, b.v1, b.v2, b.v3);
    sip_round(a.v0, a.v1, a.v2, a.v3);
    sip_round(b.v0, b.v1, b.v2, b.v3);
    a.v0 ^= m;
    b.v0 ^= n;
  }
  Lanes tag_a = a.finish(blocks);
  Lanes tag_b = b.finish(blocks);
  std::memcpy(tags, &tag_a, sizeof tag_a);
  std::memcpy(tags + kHalf, &tag_b, sizeof tag_b);
  std::memcpy(fold.data(), &folded, sizeof folded);
}

// XORs bytes into fold from its first byte on, 64 bytes to a turn.
void fold_into(Fold& fold, std::span<const std::byte> bytes) {
  unsigned char* into = reinterpret_cast<unsigned char*>(fold.data());
  for (std::size_t i = 0; i < bytes.size(); ++i) into[i % sizeof(Fold)] ^= static_cast<unsigned char>(bytes[i]);
}

std::uint64_t siphash(const Key& key, const void* data, std::size_t size) {
  std::uint64_t tag;
  crypto_shorthash_siphash24(reinterpret_cast<unsigned char*>(&tag), static_cast<const unsigned char*>(data), size,
                             key.data());
  return tag;
}

}  // namespace

BulkKey bulk_key(const Key& key) {
  BulkKey bulk;
  bulk.short_input = derive_key(key, "bsplib bulk mac short");
  for (std::size_t l = 0; l < kLanes; ++l) bulk.lanes[l] = derive_key(key, "bsplib bulk mac lane " + std::to_string(l));
  bulk.join = derive_key(key, "bsplib bulk mac join");
  return bulk;
}

namespace {

std::uint64_t bulk_mac_into(const BulkKey& key, std::span<const std::byte> data, std::byte* copy_to, Fold* fold) {
  if (data.size() < kLanesFrom) {
    if (copy_to != nullptr && !data.empty()) std::memcpy(copy_to, data.data(), data.size());
    if (fold != nullptr) *fold = fold_of(data);
    return siphash(key.short_input, data.data(), data.size());
  }
  const std::size_t blocks = data.size() / kBlock;
  // The join: 16 lane tags, the tail (under 128 bytes), the total length.
  std::byte joined[kLanes * 8 + kBlock + 8];
  std::uint64_t tags[kLanes];
  Fold folded;
  lane_tags(key, data.data(), blocks, tags, copy_to, folded);
  std::memcpy(joined, tags, sizeof tags);
  const std::size_t tail = data.size() - blocks * kBlock;
  const std::span<const std::byte> rest = data.subspan(blocks * kBlock);
  std::memcpy(joined + sizeof tags, rest.data(), tail);
  if (copy_to != nullptr) std::memcpy(copy_to + blocks * kBlock, rest.data(), tail);
  if (fold != nullptr) {
    fold_into(folded, rest);  // the blocks end on a 64-byte boundary: the tail folds from 0
    *fold = folded;
  }
  const std::uint64_t length = data.size();
  std::memcpy(joined + sizeof tags + tail, &length, 8);
  return siphash(key.join, joined, sizeof tags + tail + 8);
}

}  // namespace

Fold fold_of(std::span<const std::byte> data) {
  Fold fold{};
  const std::size_t whole = data.size() / sizeof(Fold);
  for (std::size_t i = 0; i < whole; ++i) {
    for (std::size_t w = 0; w < fold.size(); ++w) fold[w] ^= load64(data.data() + i * sizeof(Fold) + w * 8);
  }
  fold_into(fold, data.subspan(whole * sizeof(Fold)));
  return fold;
}

std::uint64_t bulk_mac(const BulkKey& key, std::span<const std::byte> data, Fold* fold) {
  return bulk_mac_into(key, data, nullptr, fold);
}

std::uint64_t bulk_mac_copy(const BulkKey& key, std::byte* destination, std::span<const std::byte> data, Fold* fold) {
  return bulk_mac_into(key, data, destination, fold);
}

std::uint64_t siphash_words(const Key& key, std::span<const std::byte> words) {
  SipState<std::uint64_t> state(load64(key.data()), load64(key.data() + 8));
  const std::size_t count = words.size() / 8;
  for (std::size_t i = 0; i < count; ++i) state.absorb(load64(words.data() + i * 8));
  return state.finish(count);
}

}  // namespace bsp::auth
