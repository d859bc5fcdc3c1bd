// transport/nic/v3_block.cc: bounds-checked walk over a TPACKET_V3 block.
#include "transport/nic/v3_block.h"

#include <linux/if_packet.h>

#include <cstring>

namespace bsp::transport::nic {
namespace {

template <typename T>
T read_at(std::span<const std::byte> bytes, std::size_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof value);
  return value;
}

constexpr std::size_t kDescriptor = sizeof(tpacket_block_desc);
constexpr std::size_t kFrameHeader = sizeof(tpacket3_hdr);
// The kernel packs a block's frames at 8-byte boundaries (V3_ALIGNMENT in af_packet.c).
constexpr std::size_t kFrameAlignment = 8;

}  // namespace

V3BlockReader::V3BlockReader(std::span<const std::byte> block) : block_(block) {
  if (block.size() < kDescriptor) {
    malformed_ = block.size() != 0;
    return;
  }
  tpacket_hdr_v1 header = read_at<tpacket_hdr_v1>(block, offsetof(tpacket_block_desc, hdr));
  count_ = header.num_pkts;
  offset_ = header.offset_to_first_pkt;
}

std::span<const std::byte> V3BlockReader::next() {
  if (malformed_ || taken_ >= count_) return {};
  // Every frame header lies after the descriptor, wholly inside the block, aligned.
  if (offset_ < kDescriptor || offset_ % kFrameAlignment != 0 || offset_ > block_.size() ||
      block_.size() - offset_ < kFrameHeader) {
    malformed_ = true;
    return {};
  }
  tpacket3_hdr header = read_at<tpacket3_hdr>(block_, offset_);
  std::size_t data = offset_ + header.tp_mac;
  // The frame's bytes start after its header and end inside the block.
  if (header.tp_mac < kFrameHeader || data > block_.size() || block_.size() - data < header.tp_snaplen) {
    malformed_ = true;
    return {};
  }
  std::span<const std::byte> frame = block_.subspan(data, header.tp_snaplen);
  ++taken_;
  if (taken_ < count_) {
    // A following frame lies strictly after this one's bytes (no loops, no overlap).
    std::size_t next = offset_ + header.tp_next_offset;
    if (header.tp_next_offset == 0 || next < data + header.tp_snaplen) {
      malformed_ = true;  // this frame is still good; the rest of the block is not
      count_ = taken_;
    }
    offset_ = next;
  }
  return frame;
}

}  // namespace bsp::transport::nic
