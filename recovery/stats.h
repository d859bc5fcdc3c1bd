// recovery/stats.h: the counters of the reliable layer (paper 001, Table 3, and more),
// per process; bsprun --stats prints them summed over processes. One field list
// (BSP_CHANNEL_STATS_FIELDS) generates the struct, its sum and difference, and the
// names the report prints, so a new counter is added in one place.
#pragma once

#include <cstdint>
#include <string_view>

namespace bsp::recovery {

// X(field, key printed by --stats, meaning)
#define BSP_CHANNEL_STATS_FIELDS(X)                                                            \
  X(data_sent, "data_sent", "data frames sent (first transmissions)")                          \
  X(data_received, "data_received", "data frames accepted (in order or buffered)")             \
  X(bytes_sent, "bytes_sent", "payload bytes of data_sent")                                    \
  X(bytes_received, "bytes_received", "payload bytes of data_received")                        \
  X(explicit_acks_sent, "explicit_acks", "ack frames (not piggy-backed)")                      \
  X(acks_received, "acks_received", "ack frames received")                                     \
  X(ack_requests_sent, "ack_requests", "data frames flagged ack-requested")                    \
  X(nacks_sent, "nacks", "retransmission requests sent")                                       \
  X(nacks_received, "nacks_received", "retransmission requests received")                      \
  X(retransmissions, "retransmissions", "data frames sent again")                              \
  X(gaps_detected, "gaps", "times a missing sequence number was noticed")                      \
  X(probes_sent, "probes", "silent-link probes (tail loss)")                                   \
  X(duplicates_received, "duplicates", "data frames already received, dropped")                \
  X(corrupt_dropped, "corrupt", "CRC mismatch")                                                \
  X(foreign_dropped, "foreign", "not from a process of this job (MAC), other job, not for us") \
  X(malformed_dropped, "malformed", "short, bad magic/version/type/length or report")          \
  X(window_refused, "window_refused", "sequence numbers no member could have sent yet")        \
  X(send_buffer_waits, "send_waits", "send() found no free buffer")                            \
  X(overflow_dropped, "overflow_refused", "out-of-order data frames refused: no free buffer")  \
  X(placed, "placed", "data frames read straight into the engine's stream (udp placement)")    \
  X(copied_in_place, "copied_in_place", "data frames copied into the engine's stream by the MAC's pass")

struct ChannelStats {
#define BSP_CHANNEL_STATS_MEMBER(field, key, meaning) std::uint64_t field = 0;
  BSP_CHANNEL_STATS_FIELDS(BSP_CHANNEL_STATS_MEMBER)
#undef BSP_CHANNEL_STATS_MEMBER

  ChannelStats& operator+=(const ChannelStats& other);
  ChannelStats& operator-=(const ChannelStats& other);

  // Calls visit(key, value) for every counter, in the list's order.
  template <typename Visit>
  void for_each(Visit&& visit) const {
#define BSP_CHANNEL_STATS_VISIT(field, key, meaning) visit(std::string_view(key), field);
    BSP_CHANNEL_STATS_FIELDS(BSP_CHANNEL_STATS_VISIT)
#undef BSP_CHANNEL_STATS_VISIT
  }
};

}  // namespace bsp::recovery
