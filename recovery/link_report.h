// recovery/link_report.h: the payload of ack, nack and probe frames: what a receiver holds
// of one link (src -> dst). Together with the header's cumulative ack it tells the sender
// exactly which frames to resend (receiver-based selective recovery, paper 001 §2.2).
//
// Layout (little-endian, after the 32-byte wire header):
//   u32 received_end  one past the highest sequence number received on the link dst -> src
//                     reported on (the reverse of the frame's own direction)
//   u32 sent_end      one past the highest sequence number the reporter has transmitted
//                     on its own link to the recipient. Frames of a link travel in order
//                     on loopback and Ethernet, so a receiver whose received_end is lower
//                     when this arrives has lost the tail: it NACKs it. This is how tail
//                     loss is found without resending anything the receiver may hold.
//   u32 echo          a probe's stamp, echoed in the answer (RTT sample); 0: none
//   u16 reserved      0
//   u16 count         number of missing ranges that follow
//   count x { u32 begin; u32 end; }  missing sequence numbers [begin, end), ascending
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace bsp::recovery {

struct SeqRange {
  std::uint32_t begin = 0;
  std::uint32_t end = 0;  // exclusive
};

struct LinkReport {
  std::uint32_t received_end = 0;
  std::uint32_t sent_end = 0;
  std::uint32_t echo = 0;
  std::vector<SeqRange> missing;
};

inline constexpr std::size_t kReportHeadSize = 16;
inline constexpr std::size_t kReportRangeSize = 8;

// Bytes encode_report() writes for a report with `ranges` missing ranges.
constexpr std::size_t report_size(std::size_t ranges) { return kReportHeadSize + ranges * kReportRangeSize; }

// Writes report into out (at least report_size(report.missing.size()) bytes); returns the
// bytes written.
std::size_t encode_report(const LinkReport& report, std::span<std::byte> out);

// Reads a report; nothing when the payload is malformed (size disagrees with count, or a
// range is empty/inverted). An empty payload is a report with no information (nothing).
std::optional<LinkReport> decode_report(std::span<const std::byte> payload);

}  // namespace bsp::recovery
