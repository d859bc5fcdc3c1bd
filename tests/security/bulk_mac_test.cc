// tests/security/bulk_mac_test.cc: the payload MAC (auth/bulk_mac.h): the construction
// rebuilt here from plain NH and libsodium's SipHash-2-4; the three NH kernels alike; and
// the tag changes with any byte, the length (an appended zero, a dropped byte) and the key,
// on both sides of the NH threshold and at every position class (word pairs, pieces, chunk
// edges, the tail).
#include <sodium.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <random>
#include <set>
#include <vector>

#include "auth/bulk_mac.h"
#include "auth/nh.h"
#include "gtest/gtest.h"

namespace {

using bsp::auth::BulkKey;
using bsp::auth::Key;

std::vector<std::byte> random_bytes(std::size_t size, std::mt19937_64& random) {
  std::vector<std::byte> bytes(size);
  for (std::byte& b : bytes) b = static_cast<std::byte>(random());
  return bytes;
}

Key random_key(std::mt19937_64& random) {
  Key key;
  for (auto& b : key) b = static_cast<std::uint8_t>(random());
  return key;
}

TEST(BulkMac, TheJoinIsSipHash24) {
  ASSERT_GE(sodium_init(), 0);
  std::mt19937_64 random(1);
  for (std::size_t words : {0, 1, 2, 7, 8, 63, 64, 1000}) {
    Key key = random_key(random);
    std::vector<std::byte> data = random_bytes(words * 8, random);
    std::uint64_t expected;
    crypto_shorthash_siphash24(reinterpret_cast<unsigned char*>(&expected),
                               reinterpret_cast<const unsigned char*>(data.data()), data.size(), key.data());
    EXPECT_EQ(bsp::auth::siphash_words(key, data), expected) << words << " words";
  }
}

TEST(BulkMac, ShortInputsAreSipHashUnderTheirKey) {
  std::mt19937_64 random(2);
  BulkKey key = bsp::auth::bulk_key(random_key(random));
  std::vector<std::byte> data = random_bytes(bsp::auth::kNhFrom - 1, random);
  std::uint64_t expected;
  crypto_shorthash_siphash24(reinterpret_cast<unsigned char*>(&expected),
                             reinterpret_cast<const unsigned char*>(data.data()), data.size(), key.short_input.data());
  EXPECT_EQ(bsp::auth::bulk_mac(key, data), expected);
}

TEST(BulkMac, EveryByteLengthAndKeyChangesTheTag) {
  std::mt19937_64 random(3);
  BulkKey key = bsp::auth::bulk_key(random_key(random));
  BulkKey other = bsp::auth::bulk_key(random_key(random));
  for (std::size_t size :
       {127, 128, 129, 191, 192, 193, 255, 256, 257, 1400, 1452, 8152, 8191, 8192, 8193, 16448, 65000}) {
    std::vector<std::byte> data = random_bytes(size, random);
    const std::uint64_t tag = bsp::auth::bulk_mac(key, data);
    EXPECT_EQ(bsp::auth::bulk_mac(key, data), tag);
    EXPECT_NE(bsp::auth::bulk_mac(other, data), tag) << size;
    std::set<std::size_t> positions = {0,         3,        4,        7,        8,        63,
                                       64,        127,      128,      255,      size / 2, size - 65,
                                       size - 64, size - 9, size - 8, size - 5, size - 4, size - 1};
    for (std::size_t edge : {8191, 8192, 8195, 8196, 16383, 16384}) {
      positions.insert(edge);
    }
    positions.erase(positions.lower_bound(size), positions.end());
    for (std::size_t at : positions) {
      std::vector<std::byte> changed = data;
      changed[at] ^= std::byte{0x01};
      EXPECT_NE(bsp::auth::bulk_mac(key, changed), tag) << "size " << size << ", byte " << at;
    }
    std::vector<std::byte> longer = data;
    longer.push_back(std::byte{0});
    EXPECT_NE(bsp::auth::bulk_mac(key, longer), tag) << size;
    std::vector<std::byte> shorter(data.begin(), data.end() - 1);
    EXPECT_NE(bsp::auth::bulk_mac(key, shorter), tag) << size;
    // Words swapped: the two 32-bit words of one NH pair, two neighbouring pairs, a pair
    // across a piece's edge, and the same place in two chunks (each word has a key word of
    // its own; chunks share their key, so the join's order must tell them apart).
    const auto swapped_tag = [&](std::size_t first, std::size_t second, std::size_t width) {
      std::vector<std::byte> swapped = data;
      std::swap_ranges(swapped.begin() + first, swapped.begin() + first + width, swapped.begin() + second);
      return swapped == data ? tag + 1 : bsp::auth::bulk_mac(key, swapped);
    };
    EXPECT_NE(swapped_tag(0, 4, 4), tag) << size;
    EXPECT_NE(swapped_tag(0, 8, 8), tag) << size;
    EXPECT_NE(swapped_tag(56, 64, 8), tag) << size;
    if (size >= 2 * bsp::auth::kNhChunk) {
      EXPECT_NE(swapped_tag(0, bsp::auth::kNhChunk, 64), tag) << size;
    }
  }
}

// NH alone under one key is easy to collide for who knows that key: a word pair whose
// first word makes (m + k) mod 2^32 zero adds nothing, whatever the second word. The second
// key is independent, so the same change alters the tag.
TEST(BulkMac, ACollisionUnderOneNhKeyIsNotOne) {
  std::mt19937_64 random(5);
  BulkKey key = bsp::auth::bulk_key(random_key(random));
  ASSERT_NE(key.nh[0][0], key.nh[1][0]);
  std::vector<std::byte> data = random_bytes(1452, random);
  const std::uint32_t cancel = 0u - key.nh[0][0];
  std::memcpy(data.data(), &cancel, 4);
  const std::uint64_t tag = bsp::auth::bulk_mac(key, data);
  for (std::uint32_t second : {0u, 1u, 0xFFFFFFFFu}) {
    std::memcpy(data.data() + 4, &second, 4);
    EXPECT_NE(bsp::auth::bulk_mac(key, data), tag) << second;
  }
}

// The last piece is padded with zeros: a payload and the same with zeros appended (one
// padded piece either way) differ by their length only, which the join holds.
TEST(BulkMac, TrailingZerosChangeTheTag) {
  std::mt19937_64 random(31);
  BulkKey key = bsp::auth::bulk_key(random_key(random));
  for (std::size_t size : {130, 260, 700, 1000, 8150, 8200}) {
    std::vector<std::byte> data = random_bytes(size, random);
    const std::uint64_t tag = bsp::auth::bulk_mac(key, data);
    for (std::size_t extra = 1; extra < 8; ++extra) {
      std::vector<std::byte> longer = data;
      longer.resize(size + extra, std::byte{0});
      EXPECT_NE(bsp::auth::bulk_mac(key, longer), tag) << size << " + " << extra;
    }
  }
}

}  // namespace

// bulk_mac_copy (the reliable layer's copy into its pool): the same tag as bulk_mac, and
// an exact copy, at every length around the NH threshold, the pieces and the chunks, and for a
// large payload; nothing written past the copy.
TEST(BulkMac, CopyGivesTheSameTagAndAnExactCopy) {
  std::mt19937_64 random(23);
  BulkKey key = bsp::auth::bulk_key(random_key(random));
  std::vector<std::byte> data(70000);
  for (auto& b : data) b = static_cast<std::byte>(random());
  std::vector<std::size_t> sizes = {0,   1,    63,   64,   65,   127,  128,   129,   191,  192,
                                    193, 1452, 8152, 8191, 8192, 8193, 16447, 65467, 70000};
  for (std::size_t size : sizes) {
    std::vector<std::byte> copy(size + 64, std::byte{0xA5});
    std::span<const std::byte> input(data.data(), size);
    bsp::auth::Fold fold{};
    EXPECT_EQ(bsp::auth::bulk_mac_copy(key, copy.data(), input, &fold), bsp::auth::bulk_mac(key, input)) << size;
    EXPECT_EQ(fold, bsp::auth::fold_of(input)) << size;
    EXPECT_EQ(std::memcmp(copy.data(), data.data(), size), 0) << size;
    for (std::size_t i = size; i < copy.size(); ++i) ASSERT_EQ(copy[i], std::byte{0xA5}) << size << " " << i;
  }
}

// The fold (the damage check's input, taken in the MAC's pass) is the XOR of the 64-byte
// pieces, the last padded with zeros, computed here byte by byte; the MAC's pass gives the
// same at every length class, and any one flipped byte changes it.
TEST(BulkMac, FoldIsTheXorOfThe64BytePieces) {
  std::mt19937_64 random(29);
  BulkKey key = bsp::auth::bulk_key(random_key(random));
  for (std::size_t size : {0, 1, 63, 64, 65, 127, 128, 129, 191, 192, 700, 8152, 8191, 8193, 65000}) {
    std::vector<std::byte> data = random_bytes(size, random);
    unsigned char expected[64] = {};
    for (std::size_t i = 0; i < size; ++i) expected[i % 64] ^= static_cast<unsigned char>(data[i]);
    bsp::auth::Fold fold{};
    bsp::auth::bulk_mac(key, data, &fold);
    EXPECT_EQ(std::memcmp(fold.data(), expected, 64), 0) << size;
    EXPECT_EQ(fold, bsp::auth::fold_of(data)) << size;
    if (size == 0) continue;
    data[size / 3] ^= std::byte{0x10};
    EXPECT_NE(bsp::auth::fold_of(data), fold) << size;
  }
}

namespace {

// NH over a chunk under one key, word by word as UMAC's paper writes it.
std::uint64_t plain_nh(const std::uint32_t* key, const std::byte* chunk, std::size_t padded_size) {
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < padded_size / 8; ++i) {
    std::uint32_t m[2];
    std::memcpy(m, chunk + 8 * i, 8);
    const std::uint64_t a = static_cast<std::uint32_t>(m[0] + key[2 * i]);
    const std::uint64_t b = static_cast<std::uint32_t>(m[1] + key[2 * i + 1]);
    sum += a * b;
  }
  return sum;
}

}  // namespace

// The whole construction, rebuilt here from plain NH and libsodium's SipHash-2-4: chunks of
// kNhChunk bytes, the last zero-padded to whole 64-byte pieces; each chunk's NH under both
// keys; the join hashes those sums in order and the length under the join key. Any faster
// way of computing it must give exactly this, frame sizes of Ethernet, jumbo and loopback
// MTUs included.
TEST(BulkMac, EqualsTheConstructionBuiltFromNhAndSipHash) {
  ASSERT_GE(sodium_init(), 0);
  std::mt19937_64 random(37);
  for (int round = 0; round < 4; ++round) {
    BulkKey key = bsp::auth::bulk_key(random_key(random));
    for (std::size_t size : {128, 129, 191, 767, 1000, 1452, 1472, 1500, 8152, 8192, 8960, 9000, 16384, 65000, 65467}) {
      std::vector<std::byte> data = random_bytes(size, random);
      std::vector<std::uint64_t> joined;
      for (std::size_t at = 0; at < size; at += bsp::auth::kNhChunk) {
        const std::size_t chunk = std::min(bsp::auth::kNhChunk, size - at);
        std::vector<std::byte> padded((chunk + 63) / 64 * 64, std::byte{0});
        std::memcpy(padded.data(), data.data() + at, chunk);
        joined.push_back(plain_nh(key.nh[0].data(), padded.data(), padded.size()));
        joined.push_back(plain_nh(key.nh[1].data(), padded.data(), padded.size()));
      }
      joined.push_back(size);
      std::uint64_t expected;
      crypto_shorthash_siphash24(reinterpret_cast<unsigned char*>(&expected),
                                 reinterpret_cast<const unsigned char*>(joined.data()), joined.size() * 8,
                                 key.join.data());
      EXPECT_EQ(bsp::auth::bulk_mac(key, data), expected) << size;
    }
  }
}

// The AVX-512, AVX2 and portable kernels give the same sums, fold and copy, for every kind
// of length up to a chunk's (whole pieces, a partial last one) and from any place in the
// key, and store nothing past the copy; a kernel this processor lacks is named and left out.
TEST(BulkMac, EveryNhKernelComputesTheSame) {
  std::mt19937_64 random(41);
  BulkKey key = bsp::auth::bulk_key(random_key(random));
  std::vector<std::byte> data = random_bytes(bsp::auth::kNhChunk, random);
  const bsp::auth::NhKernel portable = bsp::auth::nh_kernel(bsp::auth::NhIsa::portable);
  ASSERT_NE(portable, nullptr);
  const std::size_t piece = bsp::auth::kNhPiece;
  for (auto [isa, name] : {std::pair{bsp::auth::NhIsa::avx2, "avx2"}, std::pair{bsp::auth::NhIsa::avx512, "avx512"}}) {
    const bsp::auth::NhKernel kernel = bsp::auth::nh_kernel(isa);
    if (kernel == nullptr) {
      std::printf("this processor has no %s: that kernel not checked\n", name);
      continue;
    }
    for (std::size_t size :
         {std::size_t{0}, std::size_t{1}, std::size_t{31}, std::size_t{32}, std::size_t{33}, piece - 1, piece,
          piece + 1, 3 * piece, 17 * piece + 5, bsp::auth::kNhChunk - 1, bsp::auth::kNhChunk}) {
      const std::size_t key_words = (size + piece - 1) / piece * 16;
      for (std::size_t key_at : {std::size_t{0}, std::size_t{16}, bsp::auth::kNhChunk / 4 - key_words}) {
        if (key_at + key_words > bsp::auth::kNhChunk / 4) continue;
        std::array<std::uint64_t, 8> fold{1, 2, 3, 4, 5, 6, 7, 8}, expected_fold = fold;
        std::array<std::uint64_t, 2> sums{9, 10}, expected_sums = sums;
        std::vector<std::byte> copy(data.size() + 64, std::byte{0x5A}), expected_copy = copy;
        kernel(key.nh[0].data() + key_at, key.nh[1].data() + key_at, data.data(), size, copy.data(), fold, sums);
        portable(key.nh[0].data() + key_at, key.nh[1].data() + key_at, data.data(), size, expected_copy.data(),
                 expected_fold, expected_sums);
        EXPECT_EQ(sums, expected_sums) << name << " " << size << " " << key_at;
        EXPECT_EQ(fold, expected_fold) << name << " " << size << " " << key_at;
        EXPECT_EQ(copy, expected_copy) << name << " " << size << " " << key_at;
        EXPECT_EQ(std::memcmp(copy.data(), data.data(), size), 0) << name << " " << size;
        for (std::size_t i = size; i < copy.size(); ++i) ASSERT_EQ(copy[i], std::byte{0x5A}) << name << " " << size;
      }
    }
  }
  // And the portable kernel is plain NH, the last piece padded with zeros.
  std::array<std::uint64_t, 8> fold{};
  std::array<std::uint64_t, 2> sums{};
  portable(key.nh[0].data(), key.nh[1].data(), data.data(), 5 * piece - 3, nullptr, fold, sums);
  std::vector<std::byte> padded(data.begin(), data.begin() + 5 * piece);
  std::fill(padded.end() - 3, padded.end(), std::byte{0});
  EXPECT_EQ(sums[0], plain_nh(key.nh[0].data(), padded.data(), padded.size()));
  EXPECT_EQ(sums[1], plain_nh(key.nh[1].data(), padded.data(), padded.size()));
}

// The keys come from the secret alone: the same secret gives the same keys, another secret
// others, and the two NH keys differ.
TEST(BulkMac, KeysAreDerivedFromTheSecret) {
  std::mt19937_64 random(43);
  const Key secret = random_key(random);
  BulkKey key = bsp::auth::bulk_key(secret);
  BulkKey again = bsp::auth::bulk_key(secret);
  BulkKey other = bsp::auth::bulk_key(random_key(random));
  EXPECT_EQ(key.nh, again.nh);
  EXPECT_EQ(key.join, again.join);
  EXPECT_EQ(key.short_input, again.short_input);
  EXPECT_NE(key.nh[0], key.nh[1]);
  EXPECT_NE(key.nh[0], other.nh[0]);
  EXPECT_NE(key.nh[1], other.nh[1]);
  EXPECT_NE(key.join, key.short_input);
}
