// bsplib/bulk_copy.h: memcpy for a put's bulk data, minus one slow case. glibc's memcpy
// copies large blocks (from 8 KiB up to its non-temporal threshold) with `rep movsb`,
// which on this machine's AMD EPYC runs at 3.5 GB/s instead of 35-40 GB/s when the
// destination lies 1 to 15 bytes past the source modulo 4096 (measured by
// experiments/copy_alignment). A put record puts its data 13 bytes after its header, and big
// allocations all start 16 bytes into a page, so an 8 MiB bsp_put copied into its record
// stream hit exactly that case, every time. Those copies go through a plain vector loop
// instead (26 GB/s there); every other copy is memcpy's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace bsp {

// 64 bytes per step through vector registers (AVX2 or SSE2 clones; bulk_copy.cc),
// never `rep movsb`.
void copy_by_vectors(void* to, const void* from, std::size_t size);

// Exchanges the bytes of two ranges that do not overlap, 64 bytes per step (an early
// write's new bytes for the destination's old ones, engine_early_writes.cc).
void swap_bytes(void* a, void* b, std::size_t size);

// True when memcpy would take its slow path for these addresses (see the top).
inline bool slow_for_memcpy(const void* to, const void* from, std::size_t size) {
  constexpr std::size_t kFromSize = 8192;  // below this glibc does not use `rep movsb`
  auto distance = (reinterpret_cast<std::uintptr_t>(to) - reinterpret_cast<std::uintptr_t>(from)) & 4095;
  return size >= kFromSize && distance - 1 < 15;
}

inline void copy_bytes(void* to, const void* from, std::size_t size) {
  if (slow_for_memcpy(to, from, size)) [[unlikely]] {
    copy_by_vectors(to, from, size);
  } else {
    std::memcpy(to, from, size);
  }
}

}  // namespace bsp
