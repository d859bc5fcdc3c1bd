// recovery/crc32c.h: CRC32C (Castagnoli), the frame checksum. Uses the SSE4.2 crc32
// instruction when the CPU has it, a table otherwise.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace bsp {

// Continues a CRC32C over bytes (start with crc = 0).
std::uint32_t crc32c(std::span<const std::byte> bytes, std::uint32_t crc = 0);

}  // namespace bsp
