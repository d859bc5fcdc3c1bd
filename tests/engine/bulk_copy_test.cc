// tests/engine/bulk_copy_test.cc: bsp::copy_bytes (bsplib/bulk_copy.h) copies exactly what
// memcpy would, on both of its paths, and takes the vector loop exactly where glibc's
// memcpy is slow here (destination 1..15 bytes past the source modulo 4096, 8 KiB and up).
#include "bsplib/bulk_copy.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace {

TEST(BulkCopy, SlowCaseIsExactlyTheMeasuredOne) {
  alignas(4096) static unsigned char area[3 * 4096];
  const unsigned char* from = area;
  for (std::size_t distance = 0; distance < 4096 + 32; ++distance) {
    bool expected = (distance % 4096) >= 1 && (distance % 4096) <= 15;
    EXPECT_EQ(bsp::slow_for_memcpy(area + distance, from, 8192), expected) << distance;
    EXPECT_FALSE(bsp::slow_for_memcpy(area + distance, from, 8191)) << distance;  // below rep movsb's range
  }
  // A destination before the source counts modulo 4096 as well.
  EXPECT_TRUE(bsp::slow_for_memcpy(area + 4096 + 13, area + 8192, 1 << 20));
  EXPECT_FALSE(bsp::slow_for_memcpy(area + 8192 + 13 - 64, area + 8192, 1 << 20));
}

TEST(BulkCopy, CopiesLikeMemcpyAtEveryDistanceAndLength) {
  std::vector<unsigned char> source(70000 + 4096), target(70000 + 2 * 4096);
  for (std::size_t i = 0; i < source.size(); ++i) source[i] = static_cast<unsigned char>(i * 131 + 7);
  for (std::size_t distance : {0u, 1u, 7u, 13u, 15u, 16u, 63u, 64u, 4095u}) {
    for (std::size_t size : {0u, 1u, 63u, 64u, 65u, 8191u, 8192u, 8193u, 65536u + 13u}) {
      std::fill(target.begin(), target.end(), 0xEE);
      // Place the destination `distance` bytes past the source modulo 4096.
      auto src_mod = reinterpret_cast<std::uintptr_t>(source.data()) % 4096;
      auto dst_mod = reinterpret_cast<std::uintptr_t>(target.data()) % 4096;
      std::size_t shift = (src_mod + distance + 4096 - dst_mod) % 4096;
      unsigned char* to = target.data() + shift;
      bsp::copy_bytes(to, source.data(), size);
      for (std::size_t i = 0; i < size; ++i) ASSERT_EQ(to[i], source[i]) << distance << " " << size << " " << i;
      for (std::size_t i = 0; i < shift; ++i) ASSERT_EQ(target[i], 0xEE);  // nothing outside
      for (std::size_t i = shift + size; i < target.size(); ++i) ASSERT_EQ(target[i], 0xEE);
    }
  }
}

}  // namespace
