// recovery/crc32c.cc: CRC32C with the SSE4.2 instruction, or a byte table without it.
// The instruction's latency is three times its issue interval, so long inputs are cut
// into three lanes computed side by side and joined by multiplying the earlier lanes'
// CRCs by x^(8 * lane bytes) modulo the polynomial (tables built once per lane length).
#include "recovery/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace bsp {
namespace {

constexpr std::uint32_t kPolynomial = 0x82F63B78u;  // reflected Castagnoli polynomial

constexpr std::array<std::uint32_t, 256> make_table() {
  std::array<std::uint32_t, 256> table{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t value = i;
    for (int bit = 0; bit < 8; ++bit) value = (value >> 1) ^ (kPolynomial & (0u - (value & 1u)));
    table[i] = value;
  }
  return table;
}

constexpr auto kTable = make_table();

std::uint32_t crc32c_table(const unsigned char* data, std::size_t size, std::uint32_t crc) {
  for (std::size_t i = 0; i < size; ++i) crc = kTable[(crc ^ data[i]) & 0xFF] ^ (crc >> 8);
  return crc;
}

// a * b modulo the polynomial, both reflected (bit 31 is x^0), as zlib's multmodp.
constexpr std::uint32_t multiply_mod(std::uint32_t a, std::uint32_t b) {
  std::uint32_t product = 0;
  for (std::uint32_t mask = 1u << 31; mask != 0; mask >>= 1) {
    if (a & mask) product ^= b;
    b = (b & 1) ? (b >> 1) ^ kPolynomial : b >> 1;
  }
  return product;
}

// x^(8 * bytes) modulo the polynomial: what a CRC state is multiplied by when that many
// zero bytes follow.
constexpr std::uint32_t shift_of(std::size_t bytes) {
  std::uint32_t result = 1u << 31;  // x^0
  std::uint32_t power = 1u << 23;   // x^8: one byte
  for (; bytes != 0; bytes >>= 1) {
    if (bytes & 1) result = multiply_mod(power, result);
    power = multiply_mod(power, power);
  }
  return result;
}

// Multiplication of any CRC state by one constant, as four byte-indexed tables (the
// operation is linear over the state's bits).
struct ShiftTable {
  std::array<std::array<std::uint32_t, 256>, 4> bytes{};
  constexpr explicit ShiftTable(std::uint32_t factor) {
    for (int lane = 0; lane < 4; ++lane) {
      for (std::uint32_t value = 0; value < 256; ++value) {
        bytes[lane][value] = multiply_mod(factor, value << (8 * lane));
      }
    }
  }
  std::uint32_t operator()(std::uint32_t crc) const {
    return bytes[0][crc & 0xFF] ^ bytes[1][(crc >> 8) & 0xFF] ^ bytes[2][(crc >> 16) & 0xFF] ^ bytes[3][crc >> 24];
  }
};

#if defined(__x86_64__)
// Three lanes of lane_bytes each (a multiple of 8) side by side while the input holds
// them; returns the CRC state and advances data and size past what was consumed.
template <std::size_t kLaneBytes>
__attribute__((target("sse4.2"))) std::uint64_t crc32c_three_lanes(const unsigned char*& data, std::size_t& size,
                                                                   std::uint64_t crc) {
  static const ShiftTable by_one_lane(shift_of(kLaneBytes));
  static const ShiftTable by_two_lanes(shift_of(2 * kLaneBytes));
  while (size >= 3 * kLaneBytes) {
    std::uint64_t a = crc, b = 0, c = 0;
    for (std::size_t at = 0; at < kLaneBytes; at += 8) {
      std::uint64_t wa, wb, wc;
      std::memcpy(&wa, data + at, 8);
      std::memcpy(&wb, data + kLaneBytes + at, 8);
      std::memcpy(&wc, data + 2 * kLaneBytes + at, 8);
      a = _mm_crc32_u64(a, wa);
      b = _mm_crc32_u64(b, wb);
      c = _mm_crc32_u64(c, wc);
    }
    crc = by_two_lanes(static_cast<std::uint32_t>(a)) ^ by_one_lane(static_cast<std::uint32_t>(b)) ^
          static_cast<std::uint32_t>(c);
    data += 3 * kLaneBytes;
    size -= 3 * kLaneBytes;
  }
  return crc;
}

__attribute__((target("sse4.2"))) std::uint32_t crc32c_sse42(const unsigned char* data, std::size_t size,
                                                             std::uint32_t crc) {
  std::uint64_t wide = crc;
  wide = crc32c_three_lanes<2048>(data, size, wide);
  wide = crc32c_three_lanes<256>(data, size, wide);
  while (size >= 8) {
    std::uint64_t word;
    std::memcpy(&word, data, 8);
    wide = _mm_crc32_u64(wide, word);
    data += 8;
    size -= 8;
  }
  crc = static_cast<std::uint32_t>(wide);
  while (size-- > 0) crc = _mm_crc32_u8(crc, *data++);
  return crc;
}
#endif

}  // namespace

std::uint32_t crc32c(std::span<const std::byte> bytes, std::uint32_t crc) {
  const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
  crc = ~crc;
#if defined(__x86_64__)
  static const bool have_sse42 = __builtin_cpu_supports("sse4.2");
  if (have_sse42) return ~crc32c_sse42(data, bytes.size(), crc);
#endif
  return ~crc32c_table(data, bytes.size(), crc);
}

}  // namespace bsp
