// transport/udp/datagram_batching.h: the two pure computations behind udp's segmentation
// offload, kept apart from sockets so they can be tested with hostile input:
//  - gso_run(): how many frames at the front of a batch may leave in one sendmsg with
//    UDP_SEGMENT (the kernel cuts the buffer into datagrams of the first frame's size);
//  - split_coalesced(): cutting a buffer the kernel coalesced with UDP_GRO back into the
//    frames it was made of, trusting neither the segment size nor any length;
//  - coalesced_shape_ok(): whether such a buffer's segment size is one the kernel could
//    have used for frames of ours (else the buffer is counted and dropped whole).
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>

#include "transport/transport.h"

namespace bsp::transport::udp {

// What one UDP_SEGMENT send may carry: at most this many datagrams (the kernel's
// UDP_MAX_SEGMENTS is 64 on older kernels, 128 on newer ones) and this many bytes (the
// largest IPv4 UDP payload: the whole super-datagram must fit one).
inline constexpr std::size_t kMaxSegments = 64;
inline constexpr std::size_t kMaxSegmentedBytes = 65507;

// The number of frames from the front of `frames` that can go as one segmented send: all
// to the first frame's peer, all of the first frame's size except the last, which may be
// shorter, no more than max_segments and max_bytes in all. At least 1 for a non-empty
// batch (a run of one is an ordinary datagram).
inline std::size_t gso_run(std::span<const OutFrame> frames, std::size_t max_segments = kMaxSegments,
                           std::size_t max_bytes = kMaxSegmentedBytes) {
  if (frames.empty()) return 0;
  const int peer = frames[0].peer;
  const std::size_t segment = frames[0].bytes.size();
  if (segment == 0) return 1;
  std::size_t count = 1;
  std::size_t bytes = segment;
  while (count < frames.size() && count < max_segments) {
    const OutFrame& next = frames[count];
    if (next.peer != peer || next.bytes.size() > segment || next.bytes.empty()) break;
    if (bytes + next.bytes.size() > max_bytes) break;
    bytes += next.bytes.size();
    ++count;
    if (next.bytes.size() < segment) break;  // a shorter frame ends the run
  }
  return count;
}

// The kernel's most segments in one coalesced (UDP_GRO) buffer: UDP_GRO_CNT_MAX, 64; a
// little room above it for kernels that raise it.
inline constexpr std::size_t kMaxCoalescedSegments = 128;

// Whether a buffer of buffer_size bytes the kernel says it coalesced from segments of
// segment_size bytes can be frames of ours: each segment at least smallest_frame and at
// most largest_frame bytes, and no more segments than the kernel ever coalesces. A
// segment size of 0, or not below the buffer's size, means one datagram (no check here).
// Anything else (a 1-byte segment size would cut 64 KiB into 65536 "frames") is refused.
inline bool coalesced_shape_ok(std::size_t buffer_size, std::size_t segment_size, std::size_t smallest_frame,
                               std::size_t largest_frame) {
  if (segment_size == 0 || segment_size >= buffer_size) return true;
  if (segment_size < smallest_frame || segment_size > largest_frame) return false;
  const std::size_t segments = (buffer_size + segment_size - 1) / segment_size;
  if (segments > kMaxCoalescedSegments) return false;
  // The last segment may be shorter, but still a whole frame.
  return buffer_size - (segments - 1) * segment_size >= smallest_frame;
}

// Calls on_frame(bytes) for each frame of a received buffer: consecutive pieces of
// segment_size bytes, the last one possibly shorter. A segment size of 0 or one not
// smaller than the buffer (no UDP_GRO cmsg, or a nonsensical one) means the buffer is a
// single datagram. Each piece handed on is at most largest_frame bytes long: a longer one
// is cut there, so the layer above sees a length that disagrees with its header and drops
// it, and nothing past the buffer is ever read. Returns the number of pieces.
template <typename OnFrame>
std::size_t split_coalesced(std::span<const std::byte> buffer, std::size_t segment_size, std::size_t largest_frame,
                            OnFrame&& on_frame) {
  if (buffer.empty()) {
    on_frame(buffer);
    return 1;
  }
  if (segment_size == 0 || segment_size >= buffer.size()) segment_size = buffer.size();
  std::size_t count = 0;
  for (std::size_t offset = 0; offset < buffer.size(); offset += segment_size) {
    std::size_t length = std::min(segment_size, buffer.size() - offset);
    on_frame(buffer.subspan(offset, std::min(length, largest_frame)));
    ++count;
  }
  return count;
}

}  // namespace bsp::transport::udp
