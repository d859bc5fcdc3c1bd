// tests/security/bulk_mac_test.cc: the 32-lane payload MAC (auth/bulk_mac.h): each lane is
// exactly SipHash-2-4 (checked against libsodium), and the tag changes with any byte, the
// length (an appended zero, a dropped byte) and the key, on both sides of the lane
// threshold and at every position class (lane words, block edges, the tail).
#include <sodium.h>

#include <cstring>
#include <random>
#include <set>
#include <vector>

#include "auth/bulk_mac.h"
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

TEST(BulkMac, EachLaneIsSipHash24) {
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
  std::vector<std::byte> data = random_bytes(bsp::auth::kLanesFrom - 1, random);
  std::uint64_t expected;
  crypto_shorthash_siphash24(reinterpret_cast<unsigned char*>(&expected),
                             reinterpret_cast<const unsigned char*>(data.data()), data.size(), key.short_input.data());
  EXPECT_EQ(bsp::auth::bulk_mac(key, data), expected);
}

TEST(BulkMac, EveryByteLengthAndKeyChangesTheTag) {
  std::mt19937_64 random(3);
  BulkKey key = bsp::auth::bulk_key(random_key(random));
  BulkKey other = bsp::auth::bulk_key(random_key(random));
  for (std::size_t size : {511, 512, 513, 575, 576, 639, 640, 641, 767, 768, 769, 1400, 4096, 8152, 65000}) {
    std::vector<std::byte> data = random_bytes(size, random);
    const std::uint64_t tag = bsp::auth::bulk_mac(key, data);
    EXPECT_EQ(bsp::auth::bulk_mac(key, data), tag);
    EXPECT_NE(bsp::auth::bulk_mac(other, data), tag) << size;
    std::set<std::size_t> positions = {0,          7,          8,         63,        64,         127,
                                       128,        255,        256,       size / 2,  size - 257, size - 256,
                                       size - 129, size - 128, size - 65, size - 64, size - 1};
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
    // Two lanes' words swapped: the lanes have keys of their own (lanes 0 and 1; lanes 7
    // and 8, 15 and 16, 23 and 24, across groups; lane 31 and the next block's lane 0).
    for (std::size_t first : {0, 56, 120, 184, 248}) {
      std::vector<std::byte> swapped = data;
      std::swap_ranges(swapped.begin() + first, swapped.begin() + first + 8, swapped.begin() + first + 8);
      if (swapped != data) {
        EXPECT_NE(bsp::auth::bulk_mac(key, swapped), tag) << size << " " << first;
      }
    }
  }
}

// The last block is padded with zeros: a payload and the same with zeros appended (one
// padded block either way) differ by their length only, which the join holds.
TEST(BulkMac, TrailingZerosChangeTheTag) {
  std::mt19937_64 random(31);
  BulkKey key = bsp::auth::bulk_key(random_key(random));
  for (std::size_t size : {520, 700, 1000, 8150}) {
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
// an exact copy, at every length around the lane threshold and the block tails, and for a
// large payload; nothing written past the copy.
TEST(BulkMac, CopyGivesTheSameTagAndAnExactCopy) {
  std::mt19937_64 random(23);
  BulkKey key = bsp::auth::bulk_key(random_key(random));
  std::vector<std::byte> data(70000);
  for (auto& b : data) b = static_cast<std::byte>(random());
  std::vector<std::size_t> sizes = {0,   1,   63,  64,  65,  511, 512,  513,   575,
                                    576, 577, 640, 767, 768, 769, 8152, 65467, 70000};
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
  for (std::size_t size : {0, 1, 63, 64, 65, 511, 512, 575, 639, 640, 700, 767, 768, 769, 8152, 65000}) {
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

// The whole construction, rebuilt here from libsodium's SipHash-2-4 alone: lane l hashes
// word l of every 256-byte block (the last padded with zeros) under lane key l; word w
// of the join's input is the XOR of the tags of lanes w, w + 8, w + 16, w + 24, then the
// length; the join hashes those 72 bytes under the join key. Any faster way of computing
// it (key layout, the join inline) must give exactly this, frame sizes of Ethernet, jumbo
// and loopback MTUs included.
TEST(BulkMac, EqualsTheConstructionBuiltFromSipHash) {
  ASSERT_GE(sodium_init(), 0);
  std::mt19937_64 random(37);
  const auto sip = [](const Key& key, const void* data, std::size_t size) {
    std::uint64_t tag;
    crypto_shorthash_siphash24(reinterpret_cast<unsigned char*>(&tag), static_cast<const unsigned char*>(data), size,
                               key.data());
    return tag;
  };
  for (int round = 0; round < 4; ++round) {
    BulkKey key = bsp::auth::bulk_key(random_key(random));
    for (std::size_t size : {512, 513, 767, 768, 1000, 1452, 1472, 1500, 8152, 8960, 9000, 65000, 65467}) {
      std::vector<std::byte> data = random_bytes(size, random);
      const std::size_t blocks = (size + 255) / 256;
      std::vector<std::byte> padded(blocks * 256, std::byte{0});
      std::memcpy(padded.data(), data.data(), size);
      std::uint64_t joined[9] = {};
      for (std::size_t lane = 0; lane < bsp::auth::kLanes; ++lane) {
        std::vector<std::byte> words(blocks * 8);
        for (std::size_t b = 0; b < blocks; ++b) std::memcpy(&words[b * 8], &padded[b * 256 + lane * 8], 8);
        joined[lane % 8] ^= sip(key.lanes[lane], words.data(), words.size());
      }
      joined[8] = size;
      EXPECT_EQ(bsp::auth::bulk_mac(key, data), sip(key.join, joined, sizeof joined)) << size;
    }
  }
}
