// recovery/wire.h: the header every frame of every transport carries, field by field.
// Written by the channel (recovery/), checked on arrival: a frame that is foreign
// (other job or not for us), short, malformed or corrupt is counted and dropped.
// Little-endian on the wire (every supported host is little-endian: static_assert below).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>

namespace bsp::wire {

static_assert(std::endian::native == std::endian::little, "wire format is little-endian");

inline constexpr std::uint16_t kMagic = 0xB5B5;  // first two bytes of every frame
inline constexpr std::uint8_t kVersion = 3;  // 3: the payload MAC in lanes (auth/bulk_mac.h)

// What a frame is for.
enum class FrameType : std::uint8_t {
  data = 1,   // payload from the engine; carries a sequence number
  ack = 2,    // explicit acknowledgement (no payload): fields ack (+ credit)
  nack = 3,   // selective retransmission request: payload is a list of missing seqs
  probe = 4,  // "anything for me?": a silent link is poked (tail loss)
};

// Flag bits.
inline constexpr std::uint16_t kFlagAckRequest = 1u << 0;  // sender asks for an ack

#pragma pack(push, 1)
struct Header {
  std::uint16_t magic;    // kMagic
  std::uint8_t version;   // kVersion
  std::uint8_t type;      // FrameType
  std::uint32_t job_id;   // the job this frame belongs to (from the launcher)
  std::uint16_t src;      // sender's pid
  std::uint16_t dst;      // receiver's pid
  std::uint32_t seq;      // data: per-link (src->dst) sequence number, from 0
  std::uint32_t ack;      // cumulative ack for the reverse link: every seq < ack arrived
  std::uint16_t flags;    // kFlag* bits
  std::uint16_t length;   // payload bytes after the header
  std::uint32_t credit;   // free receive buffers the sender advertises (pupa policy)
  std::uint32_t crc32c;   // CRC32C of header (this field zero) and payload: damage
  std::uint64_t mac;      // SipHash-2-4 keyed by the job's secret (frame_codec.h): origin
};
#pragma pack(pop)

static_assert(sizeof(Header) == 40, "wire header is 40 bytes");

inline constexpr std::size_t kHeaderSize = sizeof(Header);

}  // namespace bsp::wire
