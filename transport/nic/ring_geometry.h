// transport/nic/ring_geometry.h: the layout of a PACKET_MMAP ring. Slots are 16-byte
// aligned rather than rounded up to a power of two (a 64 KiB frame would take a 128 KiB
// slot), and blocks are a power of two of pages (the kernel allocates 2^order pages per
// block, so any other size wastes the rest), each holding as many whole slots as fit.
#pragma once

#include <cstddef>

namespace bsp::transport::nic {

struct RingGeometry {
  std::size_t slot = 0;   // bytes per frame slot (ring header + frame), aligned
  std::size_t block = 0;  // bytes per block, a power of two
  std::size_t blocks = 0;
  std::size_t slots_per_block = 0;  // slots never straddle blocks

  std::size_t slots() const { return slots_per_block * blocks; }
  std::size_t bytes() const { return block * blocks; }
  // Offset of slot i from the ring's start.
  std::size_t offset(std::size_t i) const { return i / slots_per_block * block + i % slots_per_block * slot; }
};

// A block holds at least kSlotsPerBlock slots, in kMinRingBlock (order-5 pages) to
// kMaxRingBlock (order 8), never less than one slot. The kernel allocates each block as
// physically contiguous pages, which on a busy machine means compaction: 128 processes
// setting up 4 MiB rings took 200-290 ms each on average (1 s the slowest) in 512 KiB
// blocks, 10-30 ms (50 ms) in 128 KiB ones; 256 processes' 2 MiB rings 120-250 ms in 1
// MiB blocks, 40 ms in 128 KiB. So 64 KiB frames go 3 to a 256 KiB block, all smaller
// ones into 128 KiB blocks.
inline constexpr std::size_t kSlotsPerBlock = 3;
inline constexpr std::size_t kMinRingBlock = 128u << 10;
inline constexpr std::size_t kMaxRingBlock = 1u << 20;

// A ring of at least `frames` slots (at least one block) for frames of up to max_frame
// bytes behind a ring header of header_bytes.
RingGeometry ring_geometry(std::size_t header_bytes, std::size_t max_frame, std::size_t frames);

}  // namespace bsp::transport::nic
