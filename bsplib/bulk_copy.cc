// bsplib/bulk_copy.cc: the vector loop bulk_copy.h falls back to where memcpy is slow.
#include "bsplib/bulk_copy.h"

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

}  // namespace bsp
