// auth/nh.cc: the NH kernels of auth/nh.h. Each adds (m + k) mod 2^32 of a word pair's
// low and high halves, multiplied as 32 x 32 -> 64 bits, into 64-bit sums: in a 64-bit
// lane of a register the low half is word 2i and the high half word 2i + 1, so vpmuludq of
// t and t >> 32 is exactly one NH term per lane.
#include "auth/nh.h"

// GCC 12's AVX-512 intrinsics pass an _mm512_undefined_epi32() (a self-initialised
// variable) to their builtins, which its own -Wuninitialized then reports from the header
// once inlined here: silenced for this file, before the header (clang has no such warning).
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace bsp::auth {
namespace {

// How far ahead of the piece being hashed its input is fetched into the cache. A frame's
// payload is read from memory the sender last touched long ago (a large put's source),
// and its loads stalled: half the AVX-512 kernel's samples sat on them. The hash runs in
// bursts of a batch of frames between system calls, so the fetch runs several frames
// ahead: 8 KiB. Past the end of the input it runs on into what usually follows (the next
// frames' payload in the same source); a prefetch never faults. (nic between two emulated
// hosts, 12 alternated pairs against the raw-frame floor: 1 KiB 0.872, 4 KiB 0.880,
// 8 KiB 0.901, 16 KiB 0.889.)
constexpr std::size_t kPrefetchAhead = 8192;

// The address is formed as an integer: past the input's end a pointer would leave its array.
[[gnu::always_inline]] inline void prefetch_ahead(const std::byte* data, std::size_t at) {
  _mm_prefetch(reinterpret_cast<const char*>(reinterpret_cast<std::uintptr_t>(data) + at + kPrefetchAhead),
               _MM_HINT_T0);
}

void nh_portable(const std::uint32_t* key0, const std::uint32_t* key1, const std::byte* data, std::size_t size,
                 std::byte* copy_to, std::array<std::uint64_t, 8>& fold, std::array<std::uint64_t, 2>& sums) {
  std::uint64_t sum0 = sums[0], sum1 = sums[1];
  for (std::size_t at = 0; at < size; at += kNhPiece) {
    std::byte piece[kNhPiece] = {};
    const std::size_t bytes = std::min(kNhPiece, size - at);
    std::memcpy(piece, data + at, bytes);
    if (copy_to != nullptr) std::memcpy(copy_to + at, piece, bytes);
    for (std::size_t w = 0; w < 8; ++w) {
      std::uint64_t pair;
      std::memcpy(&pair, piece + w * 8, 8);
      fold[w] ^= pair;
      const auto low = static_cast<std::uint32_t>(pair), high = static_cast<std::uint32_t>(pair >> 32);
      const std::size_t k = at / 4 + w * 2;
      sum0 += static_cast<std::uint64_t>(low + key0[k]) * static_cast<std::uint32_t>(high + key0[k + 1]);
      sum1 += static_cast<std::uint64_t>(low + key1[k]) * static_cast<std::uint32_t>(high + key1[k + 1]);
    }
  }
  sums = {sum0, sum1};
}

// One register of input into the fold and both sums: m + k per 32-bit word, then the low
// half of each 64-bit lane times its high half.
[[gnu::target("avx2"), gnu::always_inline]] inline void add_avx2(const __m256i& m, const std::uint32_t* key0,
                                                                 const std::uint32_t* key1, __m256i& folded,
                                                                 __m256i& sum0, __m256i& sum1) {
  folded = _mm256_xor_si256(folded, m);
  const __m256i t0 = _mm256_add_epi32(m, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(key0)));
  const __m256i t1 = _mm256_add_epi32(m, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(key1)));
  sum0 = _mm256_add_epi64(sum0, _mm256_mul_epu32(t0, _mm256_srli_epi64(t0, 32)));
  sum1 = _mm256_add_epi64(sum1, _mm256_mul_epu32(t1, _mm256_srli_epi64(t1, 32)));
}

[[gnu::target("avx2")]] void nh_avx2(const std::uint32_t* key0, const std::uint32_t* key1, const std::byte* data,
                                     std::size_t size, std::byte* copy_to, std::array<std::uint64_t, 8>& fold,
                                     std::array<std::uint64_t, 2>& sums) {
  __m256i folded[2], sum0 = _mm256_setzero_si256(), sum1 = _mm256_setzero_si256();
  std::memcpy(folded, fold.data(), sizeof folded);
  const std::size_t whole = size / kNhPiece * kNhPiece;
  for (std::size_t at = 0; at < whole; at += 32) {
    prefetch_ahead(data, at);
    const __m256i m = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(data + at));
    if (copy_to != nullptr) _mm256_storeu_si256(reinterpret_cast<__m256i*>(copy_to + at), m);
    add_avx2(m, key0 + at / 4, key1 + at / 4, folded[at / 32 % 2], sum0, sum1);
  }
  if (whole < size) {
    alignas(32) std::byte last[kNhPiece] = {};
    std::memcpy(last, data + whole, size - whole);
    if (copy_to != nullptr) std::memcpy(copy_to + whole, last, size - whole);
    for (std::size_t half = 0; half < 2; ++half) {
      const __m256i m = _mm256_load_si256(reinterpret_cast<const __m256i*>(last + half * 32));
      add_avx2(m, key0 + (whole + half * 32) / 4, key1 + (whole + half * 32) / 4, folded[half], sum0, sum1);
    }
  }
  std::memcpy(fold.data(), folded, sizeof folded);
  std::uint64_t lanes0[4], lanes1[4];
  std::memcpy(lanes0, &sum0, sizeof lanes0);
  std::memcpy(lanes1, &sum1, sizeof lanes1);
  sums[0] += lanes0[0] + lanes0[1] + lanes0[2] + lanes0[3];
  sums[1] += lanes1[0] + lanes1[1] + lanes1[2] + lanes1[3];
}

[[gnu::target("avx512f"), gnu::always_inline]] inline void add_avx512(const __m512i& m, const std::uint32_t* key0,
                                                                      const std::uint32_t* key1, __m512i& folded,
                                                                      __m512i& sum0, __m512i& sum1) {
  folded = _mm512_xor_si512(folded, m);
  const __m512i t0 = _mm512_add_epi32(m, _mm512_loadu_si512(key0));
  const __m512i t1 = _mm512_add_epi32(m, _mm512_loadu_si512(key1));
  sum0 = _mm512_add_epi64(sum0, _mm512_mul_epu32(t0, _mm512_srli_epi64(t0, 32)));
  sum1 = _mm512_add_epi64(sum1, _mm512_mul_epu32(t1, _mm512_srli_epi64(t1, 32)));
}

// The last piece is read and copied under a byte mask (AVX512BW), straight from and to
// where it lies: a copy through a padded buffer on the stack cost a stall per frame.
[[gnu::target("avx512f,avx512bw")]] void nh_avx512(const std::uint32_t* key0, const std::uint32_t* key1,
                                                   const std::byte* data, std::size_t size, std::byte* copy_to,
                                                   std::array<std::uint64_t, 8>& fold,
                                                   std::array<std::uint64_t, 2>& sums) {
  __m512i folded = _mm512_loadu_si512(fold.data()), sum0 = _mm512_setzero_si512(), sum1 = _mm512_setzero_si512();
  const std::size_t whole = size / kNhPiece * kNhPiece;
  for (std::size_t at = 0; at < whole; at += kNhPiece) {
    prefetch_ahead(data, at);
    const __m512i m = _mm512_loadu_si512(data + at);
    if (copy_to != nullptr) _mm512_storeu_si512(copy_to + at, m);
    add_avx512(m, key0 + at / 4, key1 + at / 4, folded, sum0, sum1);
  }
  if (whole < size) {
    const __mmask64 bytes = (__mmask64{1} << (size - whole)) - 1;
    const __m512i m = _mm512_maskz_loadu_epi8(bytes, data + whole);
    if (copy_to != nullptr) _mm512_mask_storeu_epi8(copy_to + whole, bytes, m);
    add_avx512(m, key0 + whole / 4, key1 + whole / 4, folded, sum0, sum1);
  }
  _mm512_storeu_si512(fold.data(), folded);
  sums[0] += static_cast<std::uint64_t>(_mm512_reduce_add_epi64(sum0));
  sums[1] += static_cast<std::uint64_t>(_mm512_reduce_add_epi64(sum1));
}

}  // namespace

NhKernel nh_kernel(NhIsa isa) {
  switch (isa) {
    case NhIsa::portable:
      return nh_portable;
    case NhIsa::avx2:
      return __builtin_cpu_supports("avx2") ? nh_avx2 : nullptr;
    case NhIsa::avx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") ? nh_avx512 : nullptr;
  }
  return nullptr;
}

NhKernel best_nh_kernel() {
  static const NhKernel best = [] {
    for (NhIsa isa : {NhIsa::avx512, NhIsa::avx2}) {
      if (NhKernel kernel = nh_kernel(isa)) return kernel;
    }
    return nh_portable;
  }();
  return best;
}

}  // namespace bsp::auth
