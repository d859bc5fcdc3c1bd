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

// The first byte of every frame: the format's mark and its version in one (versions 1-3
// began 0xB5 0xB5 and had a 40-byte header; a frame of theirs is malformed here).
inline constexpr std::uint8_t kMagic = 0xB4;  // 0xB4: version 4, the 32-byte header

// What a frame is for (4 bits on the wire).
enum class FrameType : std::uint8_t {
  data = 1,   // payload from the engine; carries a sequence number
  ack = 2,    // explicit acknowledgement (no payload): fields ack (+ credit)
  nack = 3,   // selective retransmission request: payload is a list of missing seqs
  probe = 4,  // "anything for me?": a silent link is poked (tail loss)
};

// Flag bits (4 bits on the wire).
inline constexpr std::uint8_t kFlagAckRequest = 1u << 0;  // sender asks for an ack

// Byte offset of the type/flags byte (bit-fields have no offsetof).
inline constexpr std::size_t kTypeOffset = 1;

#pragma pack(push, 1)
struct Header {
  std::uint8_t magic;      // kMagic
  std::uint8_t type : 4;   // FrameType
  std::uint8_t flags : 4;  // kFlag* bits
  std::uint16_t check;     // low 16 bits of CRC32C of the payload's fold, then the header
                           // (this field zero; frame_codec.h): tells damage from a
                           // stranger's frame once the MAC has failed
  std::uint32_t job_id;    // the job this frame belongs to (from the launcher)
  std::uint16_t src;       // sender's pid
  std::uint16_t dst;       // receiver's pid
  std::uint32_t seq;       // data: per-link (src->dst) sequence number, from 0
  std::uint32_t ack;       // cumulative ack for the reverse link: every seq < ack arrived
  std::uint16_t length;    // payload bytes after the header
  std::uint16_t credit;    // free receive buffers the sender advertises (pupa policy;
                           // kWireUnlimitedCredit: no limit; larger counts saturate below it)
  std::uint64_t mac;       // SipHash-2-4 keyed by the job's secret (frame_codec.h): origin
};
#pragma pack(pop)

static_assert(sizeof(Header) == 32, "wire header is 32 bytes");

// Credit on the wire is 16 bits: the layer above counts in 32, with kUnlimitedCredit for
// "no limit" (recovery/protocol_constants.h names it for the protocol), so it is encoded
// on the way out and decoded on the way in.
inline constexpr std::uint32_t kUnlimitedCredit = 0xFFFFFFFFu;
inline constexpr std::uint16_t kWireUnlimitedCredit = 0xFFFF;
inline constexpr std::uint16_t encode_credit(std::uint32_t credit) {
  return credit == kUnlimitedCredit
             ? kWireUnlimitedCredit
             : static_cast<std::uint16_t>(credit < kWireUnlimitedCredit ? credit : kWireUnlimitedCredit - 1);
}
inline constexpr std::uint32_t decode_credit(std::uint16_t credit) {
  return credit == kWireUnlimitedCredit ? kUnlimitedCredit : credit;
}

inline constexpr std::size_t kHeaderSize = sizeof(Header);

}  // namespace bsp::wire
