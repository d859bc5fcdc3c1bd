// auth/bulk_mac.h: the MAC of a frame's payload, fast on long payloads. SipHash-2-4 is a
// chain of dependent additions and rotations (about 1.9 GB/s here), which made the MAC
// the slowest pass over every byte a datagram transport moves. Long inputs are therefore
// cut into 32 interleaved lanes (word i of each 256-byte block goes to lane i; the last
// block padded with zeros), each hashed by SipHash-2-4 under a key of its own, side by
// side: with AVX-512 as four independent registers of 8 lanes whose rounds overlap (one
// register left the vector units waiting on each round's latency: 14 GB/s, against 23
// with two and 33 with four). The 32 lane tags are XORed into 8 words (word l: lanes l,
// l + 8, l + 16, l + 24), and those and the total length are hashed by SipHash-2-4 under
// one more key. Each lane is a pseudo-random function of its words, so for two different
// inputs of one length the 8 words differ but with probability 2^-64 (a lane whose words
// differ gives an independent tag); hidden inside the join, which is a pseudo-random
// function of them and the length, they make a forgery need a SipHash forgery or such a
// collision (hash, then a PRF). Inputs shorter than kLanesFrom use plain
// SipHash-2-4 under the short-input key.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "auth/mac.h"

namespace bsp::auth {

inline constexpr std::size_t kLanes = 32;
inline constexpr std::size_t kLanesFrom = 512;  // bytes: shorter inputs take one SipHash

// The XOR of an input's 64-byte pieces (the last padded with zeros), as 8 little-endian
// words: unkeyed and public, a parity of the bytes. The MAC's pass yields it for one more
// XOR per block, so the reliable layer's damage check (recovery/frame_codec.h) reads it
// instead of the payload.
using Fold = std::array<std::uint64_t, 8>;
Fold fold_of(std::span<const std::byte> data);

struct BulkKey {
  Key short_input{};
  std::array<Key, kLanes> lanes{};
  Key join{};
};

// Derives the lane, join and short-input keys from key (keyed BLAKE2b, one purpose each).
BulkKey bulk_key(const Key& key);

// With fold, also stores fold_of(data) there, from the same pass.
std::uint64_t bulk_mac(const BulkKey& key, std::span<const std::byte> data, Fold* fold = nullptr);
// The same MAC, while copying data to destination (data.size() bytes; the two must not
// overlap): the copy rides on the hashing's pass over the bytes instead of a pass of its
// own (the reliable layer copies a payload into its pool so).
std::uint64_t bulk_mac_copy(const BulkKey& key, std::byte* destination, std::span<const std::byte> data,
                            Fold* fold = nullptr);

// One lane's SipHash-2-4 over whole 8-byte words, as the lanes compute it (for tests: it
// must equal libsodium's SipHash-2-4 of the same bytes).
std::uint64_t siphash_words(const Key& key, std::span<const std::byte> words);

}  // namespace bsp::auth
