// auth/bulk_mac.cc: the payload MAC of bulk_mac.h: plain SipHash-2-4 on short inputs, NH
// chunks joined by SipHash-2-4 on long ones (the NH kernels are auth/nh.cc; the join's
// SipHash is inlined here, fed each chunk's sums as they come).
#include "auth/bulk_mac.h"

#include <sodium.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <string>
#include <string_view>

#include "auth/nh.h"

namespace bsp::auth {
namespace {

constexpr std::uint64_t kInit0 = 0x736f6d6570736575ull, kInit1 = 0x646f72616e646f6dull, kInit2 = 0x6c7967656e657261ull,
                        kInit3 = 0x7465646279746573ull;

std::uint64_t load64(const void* at) {
  std::uint64_t value;
  std::memcpy(&value, at, 8);
  return value;
}

[[gnu::always_inline]] inline void sip_round(std::uint64_t& v0, std::uint64_t& v1, std::uint64_t& v2,
                                             std::uint64_t& v3) {
  v0 += v1;
  v1 = std::rotl(v1, 13);
  v1 ^= v0;
  v0 = std::rotl(v0, 32);
  v2 += v3;
  v3 = std::rotl(v3, 16);
  v3 ^= v2;
  v0 += v3;
  v3 = std::rotl(v3, 21);
  v3 ^= v0;
  v2 += v1;
  v1 = std::rotl(v1, 17);
  v1 ^= v2;
  v2 = std::rotl(v2, 32);
}

// SipHash-2-4's state over 8-byte words.
struct SipState {
  std::uint64_t v0, v1, v2, v3;
  SipState(std::uint64_t k0, std::uint64_t k1) : v0(k0 ^ kInit0), v1(k1 ^ kInit1), v2(k0 ^ kInit2), v3(k1 ^ kInit3) {}
  [[gnu::always_inline]] void absorb(std::uint64_t m) {
    v3 ^= m;
    sip_round(v0, v1, v2, v3);
    sip_round(v0, v1, v2, v3);
    v0 ^= m;
  }
  // The tag after `words` whole 8-byte words: the length byte, no tail.
  std::uint64_t finish(std::size_t words) {
    absorb(static_cast<std::uint64_t>(words * 8) << 56);
    v2 ^= 0xff;
    for (int i = 0; i < 4; ++i) sip_round(v0, v1, v2, v3);
    return v0 ^ v1 ^ v2 ^ v3;
  }
};

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
  for (std::size_t k = 0; k < bulk.nh.size(); ++k) {
    // ChaCha20's key is 32 bytes: two derived keys side by side.
    const Key first = derive_key(key, "bsplib bulk mac nh " + std::to_string(k) + " first half");
    const Key second = derive_key(key, "bsplib bulk mac nh " + std::to_string(k) + " second half");
    unsigned char seed[randombytes_SEEDBYTES];
    static_assert(sizeof seed == 2 * kKeySize);
    std::memcpy(seed, first.data(), kKeySize);
    std::memcpy(seed + kKeySize, second.data(), kKeySize);
    randombytes_buf_deterministic(bulk.nh[k].data(), sizeof bulk.nh[k], seed);
    sodium_memzero(seed, sizeof seed);
  }
  bulk.join = derive_key(key, "bsplib bulk mac join");
  return bulk;
}

namespace {

std::uint64_t bulk_mac_into(const BulkKey& key, std::span<const std::byte> data, std::byte* copy_to, Fold* fold) {
  if (data.size() < kNhFrom) {
    if (copy_to != nullptr && !data.empty()) std::memcpy(copy_to, data.data(), data.size());
    if (fold != nullptr) *fold = fold_of(data);
    return siphash(key.short_input, data.data(), data.size());
  }
  const NhKernel nh = best_nh_kernel();
  SipState join(load64(key.join.data()), load64(key.join.data() + 8));
  std::size_t words = 0;
  Fold folded{};
  for (std::size_t at = 0; at < data.size(); at += kNhChunk) {
    const std::size_t size = std::min(kNhChunk, data.size() - at);
    std::array<std::uint64_t, 2> sums{};
    nh(key.nh[0].data(), key.nh[1].data(), data.data() + at, size, copy_to != nullptr ? copy_to + at : nullptr, folded,
       sums);
    join.absorb(sums[0]);
    join.absorb(sums[1]);
    words += 2;
  }
  if (fold != nullptr) *fold = folded;
  join.absorb(data.size());
  return join.finish(words + 1);
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
  SipState state(load64(key.data()), load64(key.data() + 8));
  const std::size_t count = words.size() / 8;
  for (std::size_t i = 0; i < count; ++i) state.absorb(load64(words.data() + i * 8));
  return state.finish(count);
}

}  // namespace bsp::auth
