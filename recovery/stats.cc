// recovery/stats.cc: adding counter sets (summing over processes).
#include "recovery/stats.h"

namespace bsp::recovery {

ChannelStats& ChannelStats::operator+=(const ChannelStats& o) {
  data_sent += o.data_sent;
  data_received += o.data_received;
  bytes_sent += o.bytes_sent;
  bytes_received += o.bytes_received;
  explicit_acks_sent += o.explicit_acks_sent;
  acks_received += o.acks_received;
  ack_requests_sent += o.ack_requests_sent;
  nacks_sent += o.nacks_sent;
  nacks_received += o.nacks_received;
  retransmissions += o.retransmissions;
  gaps_detected += o.gaps_detected;
  probes_sent += o.probes_sent;
  duplicates_received += o.duplicates_received;
  corrupt_dropped += o.corrupt_dropped;
  foreign_dropped += o.foreign_dropped;
  malformed_dropped += o.malformed_dropped;
  send_buffer_waits += o.send_buffer_waits;
  overflow_dropped += o.overflow_dropped;
  return *this;
}

}  // namespace bsp::recovery
