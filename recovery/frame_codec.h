// recovery/frame_codec.h: writing and checking the wire header (recovery/wire.h), shared
// by every channel. check_frame() is the single gate every arriving frame passes: what
// it rejects is counted by the caller and dropped, never trusted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "recovery/wire.h"

namespace bsp::wire {

enum class Verdict {
  ok,
  malformed,  // shorter than a header, wrong magic/version/type, length disagrees
  foreign,    // another job, not addressed to this pid, or an unknown source pid
  corrupt,    // CRC32C mismatch
};

// Fills header fields magic, version, length and crc32c for a frame laid out as
// [Header][payload] in frame (frame.size() == kHeaderSize + payload length). The caller
// sets every other field first. Use seal_frame() again after changing any field (e.g. a
// piggy-backed ack written at transmit time).
void seal_frame(std::span<std::byte> frame);

// Checks an arrived frame. On ok, header receives a copy of its header and the payload
// is frame.subspan(kHeaderSize, header.length).
Verdict check_frame(std::span<const std::byte> frame, std::uint32_t job_id, int my_pid,
                    int nprocs, Header& header);

}  // namespace bsp::wire
