// transport/nic/ring_geometry.cc: slot and block sizes of a PACKET_MMAP ring.
#include "transport/nic/ring_geometry.h"

#include <linux/if_packet.h>

#include <algorithm>
#include <bit>

namespace bsp::transport::nic {

RingGeometry ring_geometry(std::size_t header_bytes, std::size_t max_frame, std::size_t frames) {
  RingGeometry geometry;
  geometry.slot = TPACKET_ALIGN(header_bytes + max_frame);
  geometry.block = std::max(std::bit_ceil(geometry.slot),
                            std::clamp(std::bit_ceil(kSlotsPerBlock * geometry.slot), kMinRingBlock, kMaxRingBlock));
  geometry.slots_per_block = geometry.block / geometry.slot;
  geometry.blocks = std::max<std::size_t>(1, (frames + geometry.slots_per_block - 1) / geometry.slots_per_block);
  return geometry;
}

}  // namespace bsp::transport::nic
