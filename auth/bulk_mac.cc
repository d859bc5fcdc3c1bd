// auth/bulk_mac.cc: 8-lane SipHash-2-4 for long payloads (see bulk_mac.h). The lanes are a
// GCC vector of 8 64-bit words: one AVX-512 register where the processor has it, two
// AVX2 registers or four SSE2 ones elsewhere (target_clones picks at load time).
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

using Lanes = std::uint64_t __attribute__((vector_size(8 * kLanes)));

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

// The compression of every block and the finalisation of SipHash-2-4, lane by lane.
// blocks: 64-byte blocks at data; tags receives the 8 lane tags. With copy_to, each block
// is also stored there as it is hashed (bulk_mac_copy: the copy rides on the hashing).
__attribute__((target_clones("avx512f", "avx2", "default"))) void lane_tags(const BulkKey& key, const std::byte* data,
                                                                            std::size_t blocks, std::uint64_t* tags,
                                                                            std::byte* copy_to) {
  Lanes k0, k1;
  for (std::size_t l = 0; l < kLanes; ++l) {
    k0[l] = load64(key.lanes[l].data());
    k1[l] = load64(key.lanes[l].data() + 8);
  }
  SipState<Lanes> state(k0, k1);
  for (std::size_t b = 0; b < blocks; ++b) {
    Lanes m;
    std::memcpy(&m, data + b * sizeof(Lanes), sizeof(Lanes));
    if (copy_to != nullptr) std::memcpy(copy_to + b * sizeof(Lanes), &m, sizeof(Lanes));
    state.absorb(m);
  }
  Lanes tag = state.finish(blocks);
  std::memcpy(tags, &tag, sizeof tag);
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

std::uint64_t bulk_mac_into(const BulkKey& key, std::span<const std::byte> data, std::byte* copy_to) {
  if (data.size() < kLanesFrom) {
    if (copy_to != nullptr && !data.empty()) std::memcpy(copy_to, data.data(), data.size());
    return siphash(key.short_input, data.data(), data.size());
  }
  const std::size_t blocks = data.size() / sizeof(Lanes);
  // The join: 8 lane tags, the tail (under 64 bytes), the total length.
  std::byte joined[sizeof(Lanes) + sizeof(Lanes) + 8];
  std::uint64_t tags[kLanes];
  lane_tags(key, data.data(), blocks, tags, copy_to);
  std::memcpy(joined, tags, sizeof tags);
  const std::size_t tail = data.size() - blocks * sizeof(Lanes);
  std::memcpy(joined + sizeof tags, data.data() + blocks * sizeof(Lanes), tail);
  if (copy_to != nullptr) std::memcpy(copy_to + blocks * sizeof(Lanes), data.data() + blocks * sizeof(Lanes), tail);
  const std::uint64_t length = data.size();
  std::memcpy(joined + sizeof tags + tail, &length, 8);
  return siphash(key.join, joined, sizeof tags + tail + 8);
}

}  // namespace

std::uint64_t bulk_mac(const BulkKey& key, std::span<const std::byte> data) {
  return bulk_mac_into(key, data, nullptr);
}

std::uint64_t bulk_mac_copy(const BulkKey& key, std::byte* destination, std::span<const std::byte> data) {
  return bulk_mac_into(key, data, destination);
}

std::uint64_t siphash_words(const Key& key, std::span<const std::byte> words) {
  SipState<std::uint64_t> state(load64(key.data()), load64(key.data() + 8));
  const std::size_t count = words.size() / 8;
  for (std::size_t i = 0; i < count; ++i) state.absorb(load64(words.data() + i * 8));
  return state.finish(count);
}

}  // namespace bsp::auth
