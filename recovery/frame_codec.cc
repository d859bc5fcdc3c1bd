// recovery/frame_codec.cc: sealing (length + CRC32C) and checking wire headers.
#include "recovery/frame_codec.h"

#include <cstring>

#include "recovery/crc32c.h"

namespace bsp::wire {
namespace {

std::uint32_t frame_crc(std::span<const std::byte> frame) {
  // CRC over the header with its crc32c field taken as zero, then the payload.
  constexpr std::size_t crc_at = offsetof(Header, crc32c);
  static constexpr std::byte zeros[4] = {};
  std::uint32_t crc = crc32c(frame.first(crc_at));
  crc = crc32c(std::span<const std::byte>(zeros, 4), crc);
  return crc32c(frame.subspan(crc_at + 4), crc);
}

}  // namespace

void seal_frame(std::span<std::byte> frame) {
  Header header;
  std::memcpy(&header, frame.data(), kHeaderSize);
  header.magic = kMagic;
  header.version = kVersion;
  header.length = static_cast<std::uint16_t>(frame.size() - kHeaderSize);
  header.crc32c = 0;
  std::memcpy(frame.data(), &header, kHeaderSize);
  header.crc32c = frame_crc(frame);
  std::memcpy(frame.data() + offsetof(Header, crc32c), &header.crc32c, 4);
}

Verdict check_frame(std::span<const std::byte> frame, std::uint32_t job_id, int my_pid,
                    int nprocs, Header& header) {
  if (frame.size() < kHeaderSize) return Verdict::malformed;
  std::memcpy(&header, frame.data(), kHeaderSize);
  if (header.magic != kMagic || header.version != kVersion) return Verdict::malformed;
  if (header.type < static_cast<std::uint8_t>(FrameType::data) ||
      header.type > static_cast<std::uint8_t>(FrameType::probe)) {
    return Verdict::malformed;
  }
  if (header.length != frame.size() - kHeaderSize) return Verdict::malformed;
  if (frame_crc(frame) != header.crc32c) return Verdict::corrupt;
  if (header.job_id != job_id || header.dst != my_pid || header.src >= nprocs ||
      header.src == my_pid) {
    return Verdict::foreign;
  }
  return Verdict::ok;
}

}  // namespace bsp::wire
