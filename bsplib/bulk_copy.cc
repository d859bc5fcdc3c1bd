// bsplib/bulk_copy.cc: the vector loop bulk_copy.h falls back to where memcpy is slow,
// and the exchange of two ranges' bytes.
#include "bsplib/bulk_copy.h"

#include <utility>

namespace bsp {
namespace {
// 32 bytes, unaligned, allowed to alias anything: one AVX register (two SSE ones).
typedef unsigned char Block __attribute__((vector_size(32), aligned(1), may_alias));
}  // namespace

[[gnu::target_clones("avx2", "default")]] void copy_by_vectors(void* to, const void* from, std::size_t size) {
  auto* out = static_cast<unsigned char*>(to);
  const auto* in = static_cast<const unsigned char*>(from);
  std::size_t at = 0;
  for (; at + 64 <= size; at += 64) {
    Block first = *reinterpret_cast<const Block*>(in + at);
    Block second = *reinterpret_cast<const Block*>(in + at + 32);
    *reinterpret_cast<Block*>(out + at) = first;
    *reinterpret_cast<Block*>(out + at + 32) = second;
  }
  std::memcpy(out + at, in + at, size - at);
}

[[gnu::target_clones("avx2", "default")]] void swap_bytes(void* a, void* b, std::size_t size) {
  auto* left = static_cast<unsigned char*>(a);
  auto* right = static_cast<unsigned char*>(b);
  std::size_t at = 0;
  for (; at + 64 <= size; at += 64) {
    Block left_first = *reinterpret_cast<const Block*>(left + at);
    Block left_second = *reinterpret_cast<const Block*>(left + at + 32);
    Block right_first = *reinterpret_cast<const Block*>(right + at);
    Block right_second = *reinterpret_cast<const Block*>(right + at + 32);
    *reinterpret_cast<Block*>(left + at) = right_first;
    *reinterpret_cast<Block*>(left + at + 32) = right_second;
    *reinterpret_cast<Block*>(right + at) = left_first;
    *reinterpret_cast<Block*>(right + at + 32) = left_second;
  }
  for (; at < size; ++at) std::swap(left[at], right[at]);
}

}  // namespace bsp
