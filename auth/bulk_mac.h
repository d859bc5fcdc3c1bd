// auth/bulk_mac.h: the MAC of a frame's payload, fast on long payloads. SipHash-2-4 is a
// chain of dependent additions and rotations (about 3.6 GB/s here), which made the MAC
// the slowest pass over every byte a datagram transport moves. Long inputs are therefore
// hashed, then the hash is hashed under SipHash: the input is cut into chunks of kNhChunk
// bytes (the last one shorter, zero-padded to whole 64-byte pieces), each chunk goes
// through NH (auth/nh.h) under two independent keys of kNhChunk bytes, and the two sums of
// every chunk in order, then the total length, are hashed by SipHash-2-4 under one more
// key (the join). NH is 2^-32-almost-universal on equal-length strings, so for two
// different inputs of one length the sums of some chunk collide under both keys with
// probability at most 2^-64; inputs of different lengths differ in the join's last word.
// The sums are never seen outside the join, a pseudo-random function of them: forging the
// MAC means forging SipHash or finding such a collision blind (hash, then a PRF). NH is
// one multiply per 8 bytes (74 GB/s on 65,000 bytes with AVX-512 here, where 32 SipHash
// lanes side by side reached 29), so the copy that rides on its pass nears memcpy's
// speed. Inputs shorter than kNhFrom take plain SipHash-2-4 under the short-input key.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "auth/mac.h"

namespace bsp::auth {

inline constexpr std::size_t kNhFrom = 128;    // bytes: shorter inputs take one SipHash
inline constexpr std::size_t kNhChunk = 8192;  // bytes hashed by NH under one stretch of key

// The XOR of an input's 64-byte pieces (the last padded with zeros), as 8 little-endian
// words: unkeyed and public, a parity of the bytes. The MAC's pass yields it for one more
// XOR per block, so the reliable layer's damage check (recovery/frame_codec.h) reads it
// instead of the payload.
using Fold = std::array<std::uint64_t, 8>;
Fold fold_of(std::span<const std::byte> data);

struct BulkKey {
  Key short_input{};
  // NH's two keys, one 32-bit word per input word of a chunk.
  std::array<std::array<std::uint32_t, kNhChunk / 4>, 2> nh{};
  Key join{};
};

// Derives the short-input, NH and join keys from key (keyed BLAKE2b, one purpose each; the
// NH keys are ChaCha20's stream under a key derived so).
BulkKey bulk_key(const Key& key);

// With fold, also stores fold_of(data) there, from the same pass.
std::uint64_t bulk_mac(const BulkKey& key, std::span<const std::byte> data, Fold* fold = nullptr);
// The same MAC, while copying data to destination (data.size() bytes; the two must not
// overlap): the copy rides on the hashing's pass over the bytes instead of a pass of its
// own (the reliable layer copies a payload into its pool so).
std::uint64_t bulk_mac_copy(const BulkKey& key, std::byte* destination, std::span<const std::byte> data,
                            Fold* fold = nullptr);

// SipHash-2-4 over whole 8-byte words, as the join computes it inline (for tests: it must
// equal libsodium's SipHash-2-4 of the same bytes).
std::uint64_t siphash_words(const Key& key, std::span<const std::byte> words);

}  // namespace bsp::auth
