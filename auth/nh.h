// auth/nh.h: NH, the universal hash at the bottom of UMAC (Black, Halevi, Krawczyk,
// Krovetz, Rogaway, CRYPTO 1999), as the payload MAC (auth/bulk_mac.h) runs it: over
// 64-byte pieces of a chunk, under two keys at once, with the copy and the fold of the
// pieces riding on the same pass. For little-endian 32-bit words m and key words k,
//   NH_k(m) = sum over i of ((m[2i] + k[2i]) mod 2^32) * ((m[2i+1] + k[2i+1]) mod 2^32)
// mod 2^64: one 32 x 32 -> 64-bit multiply per 8 bytes, which AVX-512 does 8 at a time
// (vpmuludq), where a SipHash lane needs two rounds of 14 operations. For two different
// inputs of one length, the two sums under independent keys collide with probability at
// most 2^-64 (NH is 2^-32-almost-universal on equal-length strings).
// Three kernels compute exactly the same sums: AVX-512, AVX2 and portable C++; the best
// the processor has is picked once.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace bsp::auth {

inline constexpr std::size_t kNhPiece = 64;  // bytes: the kernels' step, one AVX-512 register

// Adds NH over `size` bytes at data (whole 64-byte pieces, the last one zero-padded), under
// key0 and key1 (16 words per piece each, from the piece's place in its chunk on), to
// sums[0] and sums[1]; XORs each piece (padded) into fold (8 little-endian words); with
// copy_to, also stores the size bytes there, and nothing past them.
using NhKernel = void (*)(const std::uint32_t* key0, const std::uint32_t* key1, const std::byte* data, std::size_t size,
                          std::byte* copy_to, std::array<std::uint64_t, 8>& fold, std::array<std::uint64_t, 2>& sums);

enum class NhIsa { portable, avx2, avx512 };

// The kernel for isa, or nullptr where this processor lacks it.
NhKernel nh_kernel(NhIsa isa);
// The fastest kernel this processor runs.
NhKernel best_nh_kernel();

}  // namespace bsp::auth
