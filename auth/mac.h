// auth/mac.h: message authentication keyed by the job's secret: SipHash-2-4 (Aumasson and
// Bernstein, INDOCRYPT 2012) from libsodium, a 64-bit tag over any number of byte ranges.
// Every data frame carries one (recovery/wire.h), and the control plane's and tcp's
// handshakes answer a random challenge with one, so nobody without the secret can forge
// a frame or join a job.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string_view>

namespace bsp::auth {

inline constexpr std::size_t kKeySize = 16;  // 128 bits
using Key = std::array<std::uint8_t, kKeySize>;

// The tag of the concatenation of parts.
std::uint64_t mac(const Key& key, std::initializer_list<std::span<const std::byte>> parts);

// A key for one purpose only, derived from key by keyed BLAKE2b over the purpose's name.
Key derive_key(const Key& key, std::string_view purpose);

// Compares two tags in constant time.
bool same_tag(std::uint64_t a, std::uint64_t b);

// Fills buffer with random bytes from the kernel (challenges, secrets).
void random_bytes(std::span<std::byte> buffer);

}  // namespace bsp::auth
