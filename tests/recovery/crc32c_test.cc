// tests/recovery/crc32c_test.cc: the frame checksum: the standard check value, and long
// inputs (computed in three lanes joined by shift tables) equal to the same bytes fed in
// short pieces (one lane), at every alignment and at lengths around the lane sizes.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "recovery/crc32c.h"

namespace bsp {
namespace {

std::uint32_t in_short_pieces(std::span<const std::byte> bytes) {
  std::uint32_t crc = 0;
  for (std::size_t at = 0; at < bytes.size(); at += 97) {
    crc = crc32c(bytes.subspan(at, std::min<std::size_t>(97, bytes.size() - at)), crc);
  }
  return crc;
}

TEST(Crc32cTest, CheckValue) {
  const char text[] = "123456789";
  EXPECT_EQ(crc32c(std::as_bytes(std::span(text, 9))), 0xE3069283u);
  EXPECT_EQ(crc32c({}), 0u);
}

TEST(Crc32cTest, LongInputsEqualTheirPieces) {
  std::mt19937 generator(5);
  std::vector<std::byte> data(3 * 2048 * 3 + 64);
  for (std::byte& b : data) b = static_cast<std::byte>(generator());
  std::vector<std::size_t> lengths = {0,    1,    7,    8,    767,  768,  769,   1536,
                                      2303, 6143, 6144, 6145, 8152, 8192, 12288, 18431};
  for (int i = 0; i < 40; ++i) lengths.push_back(generator() % (data.size() - 8));
  for (std::size_t length : lengths) {
    for (std::size_t offset : {0, 1, 3, 8}) {
      auto bytes = std::span<const std::byte>(data).subspan(offset, length);
      EXPECT_EQ(crc32c(bytes), in_short_pieces(bytes)) << "length " << length << " offset " << offset;
      EXPECT_EQ(crc32c(bytes, 0x12345678u),
                crc32c(bytes.subspan(length / 2), crc32c(bytes.first(length / 2), 0x12345678u)));
    }
  }
}

}  // namespace
}  // namespace bsp
