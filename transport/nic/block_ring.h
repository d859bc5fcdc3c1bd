// transport/nic/block_ring.h: a TPACKET_V3 receive ring: the kernel packs frames one
// after another into blocks and hands over a whole block at a time (when the next frame
// does not fit, or when the block's retire timer fires), so the program looks at one
// status word per block rather than per frame. Frames are read in place (no copy, no
// system call); a block goes back to the kernel when its last frame is released.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "transport/nic/ring_geometry.h"
#include "transport/nic/v3_block.h"

namespace bsp::transport::nic {

class BlockRing {
 public:
  // Sets the socket to TPACKET_V3 and maps a receive ring of at least `frames` frames of
  // up to max_frame bytes; a block not yet full is handed over after retire_ms. Throws
  // std::runtime_error.
  BlockRing(int fd, std::size_t max_frame, std::size_t frames, unsigned retire_ms);
  ~BlockRing();
  BlockRing(const BlockRing&) = delete;
  BlockRing& operator=(const BlockRing&) = delete;

  // The next frame the kernel has handed over (empty when none). Valid until release().
  std::span<const std::byte> peek();
  void release();

  std::size_t frames() const { return geometry_.slots(); }
  // Blocks whose frame headers were out of bounds (the rest of such a block is skipped).
  std::uint64_t malformed_blocks() const { return malformed_blocks_; }

 private:
  void return_block();

  RingGeometry geometry_;
  std::byte* map_ = nullptr;
  std::size_t block_ = 0;                // the block being read
  std::optional<V3BlockReader> reader_;  // its frames, once the kernel handed it over
  std::span<const std::byte> current_;   // the frame peek() returned
  std::uint64_t malformed_blocks_ = 0;
};

}  // namespace bsp::transport::nic
