// auth/bulk_mac.cc: 32-lane SipHash-2-4 for long payloads (see bulk_mac.h). The lanes are
// four GCC vectors of 8 64-bit words, hashed round by round in turn so that their chains
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

// A group of 8 lanes: one 64-byte piece of a 256-byte block.
using Lanes = std::uint64_t __attribute__((vector_size(64)));
constexpr std::size_t kGroups = kLanes / 8;
constexpr std::size_t kBlock = kGroups * sizeof(Lanes);

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
  SipState() = default;
  [[gnu::always_inline]] SipState(const T& k0, const T& k1) { init(k0, k1); }
  [[gnu::always_inline]] void init(const T& k0, const T& k1) {
    v0 = k0 ^ kInit0;
    v1 = k1 ^ kInit1;
    v2 = k0 ^ kInit2;
    v3 = k1 ^ kInit3;
  }
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

// One 256-byte block into the groups: words 8g .. 8g + 7 to group g's lanes, hashed round
// by round in turn across the groups so that their dependency chains overlap.
[[gnu::always_inline]] inline void absorb_block(SipState<Lanes>* groups, const std::byte* block, Lanes& folded) {
  Lanes m[kGroups];
#pragma GCC unroll 4
  for (std::size_t g = 0; g < kGroups; ++g) {
    std::memcpy(&m[g], block + g * sizeof(Lanes), sizeof(Lanes));
    folded ^= m[g];
    groups[g].v3 ^= m[g];
  }
#pragma GCC unroll 4
  for (std::size_t g = 0; g < kGroups; ++g) sip_round(groups[g].v0, groups[g].v1, groups[g].v2, groups[g].v3);
#pragma GCC unroll 4
  for (std::size_t g = 0; g < kGroups; ++g) sip_round(groups[g].v0, groups[g].v1, groups[g].v2, groups[g].v3);
#pragma GCC unroll 4
  for (std::size_t g = 0; g < kGroups; ++g) groups[g].v0 ^= m[g];
}

// The 32 lanes over size bytes at data (the last block padded with zeros) and their
// finalisation; joined receives the lane tags XORed group by group (word l: the tags of
// lanes l, l + 8, l + 16, l + 24), fold the XOR of the 64-byte pieces. With copy_to, the
// bytes are also stored there as they are hashed (bulk_mac_copy: the copy rides on the
// hashing).
__attribute__((target_clones("avx512f", "avx2", "default"))) void lane_tags(const BulkKey& key, const std::byte* data,
                                                                            std::size_t size, std::uint64_t* joined,
                                                                            std::byte* copy_to, Fold& fold) {
  SipState<Lanes> groups[kGroups];
  for (std::size_t g = 0; g < kGroups; ++g) {
    Lanes k0, k1;
    for (std::size_t l = 0; l < 8; ++l) {
      k0[l] = load64(key.lanes[8 * g + l].data());
      k1[l] = load64(key.lanes[8 * g + l].data() + 8);
    }
    groups[g].init(k0, k1);
  }
  Lanes folded{};
  const std::size_t blocks = size / kBlock;
  for (std::size_t i = 0; i < blocks; ++i) {
    if (copy_to != nullptr) std::memcpy(copy_to + i * kBlock, data + i * kBlock, kBlock);
    absorb_block(groups, data + i * kBlock, folded);
  }
  const std::size_t tail = size - blocks * kBlock;
  std::size_t words = blocks;
  if (tail > 0) {
    alignas(64) std::byte last[kBlock] = {};
    std::memcpy(last, data + blocks * kBlock, tail);
    if (copy_to != nullptr) std::memcpy(copy_to + blocks * kBlock, last, tail);
    absorb_block(groups, last, folded);
    ++words;
  }
  Lanes tag = groups[0].finish(words);
  for (std::size_t g = 1; g < kGroups; ++g) tag ^= groups[g].finish(words);
  std::memcpy(joined, &tag, sizeof tag);
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
  // The join: the 8 words of XORed lane tags, the total length (the padding's extent).
  std::uint64_t joined[8 + 1];
  Fold folded;
  lane_tags(key, data.data(), data.size(), joined, copy_to, folded);
  if (fold != nullptr) *fold = folded;
  joined[8] = data.size();
  // The join's nine words by the inlined rounds: SipHash-2-4 still (the tests hold it to
  // libsodium's), without a library call per frame.
  return siphash_words(key.join, std::as_bytes(std::span(joined)));
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
