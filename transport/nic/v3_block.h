// transport/nic/v3_block.h: reading the frames of one TPACKET_V3 receive block. The
// block's bytes are shared with the kernel and treated as hostile: its descriptor is
// read once, and every offset, length and count is checked against the block before a
// frame is handed out; the first frame that fails ends the block (the rest is skipped).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace bsp::transport::nic {

class V3BlockReader {
 public:
  // block: the whole block (its descriptor first), as many bytes as the ring's block size.
  explicit V3BlockReader(std::span<const std::byte> block);

  // The next frame's bytes (Ethernet header first), or empty when the block is done or
  // the rest of it is malformed.
  std::span<const std::byte> next();

  // true once a frame header or the descriptor was found out of bounds.
  bool malformed() const { return malformed_; }
  std::uint32_t frames_announced() const { return count_; }

 private:
  std::span<const std::byte> block_;
  std::uint32_t count_ = 0;  // frames the descriptor announces
  std::uint32_t taken_ = 0;  // frames handed out
  std::size_t offset_ = 0;   // of the next frame header
  bool malformed_ = false;
};

}  // namespace bsp::transport::nic
