// recovery/stats.h: the counters of the reliable layer (paper 001, Table 3, and more),
// per process; bsprun --stats prints them summed over processes.
#pragma once

#include <cstdint>

namespace bsp::recovery {

struct ChannelStats {
  std::uint64_t data_sent = 0;           // data frames sent (first transmissions)
  std::uint64_t data_received = 0;       // data frames accepted (in order or buffered)
  std::uint64_t bytes_sent = 0;          // payload bytes of data_sent
  std::uint64_t bytes_received = 0;      // payload bytes of data_received
  std::uint64_t explicit_acks_sent = 0;  // ack frames (not piggy-backed)
  std::uint64_t acks_received = 0;       // ack frames received
  std::uint64_t ack_requests_sent = 0;   // data frames flagged ack-requested
  std::uint64_t nacks_sent = 0;          // retransmission requests sent
  std::uint64_t nacks_received = 0;      // retransmission requests received
  std::uint64_t retransmissions = 0;     // data frames sent again
  std::uint64_t gaps_detected = 0;       // times a missing sequence number was noticed
  std::uint64_t probes_sent = 0;         // silent-link probes (tail loss)
  std::uint64_t duplicates_received = 0; // data frames already received, dropped
  std::uint64_t corrupt_dropped = 0;     // CRC mismatch
  std::uint64_t foreign_dropped = 0;     // other job, or not addressed to us
  std::uint64_t malformed_dropped = 0;   // short, bad magic/version/type/length
  std::uint64_t send_buffer_waits = 0;   // send() found no free buffer
  std::uint64_t overflow_dropped = 0;    // out-of-order data frames refused: no free buffer

  ChannelStats& operator+=(const ChannelStats& other);
};

}  // namespace bsp::recovery
