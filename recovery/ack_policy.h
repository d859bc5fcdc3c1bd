// recovery/ack_policy.h: when acknowledgements are asked for and when they are sent, as a
// policy chosen at run time (ChannelConfig::ack_policy). Piggy-backed acks (every frame's
// header carries the cumulative ack of the reverse link) are always on; a policy decides
// (1) on the sending side which data frames carry the ack-request flag, and (2) on the
// receiving side when an explicit (non-piggy-backed) ack frame goes out.
//   "buffer": paper 001 §2.2 - request when the free buffers would run out within one
//             round trip (a link's window: once half of it is taken too); ack only when
//             asked and >= n/(2p) frames came since the last ack
//   "every":  ack every data frame (the naive baseline)
//   "pupa":   paper 000 - sender-controlled requests between low and high water marks,
//             immediate ack when asked, optimistic zero-credit flow control on overflow
// Probes (tail loss), NACKs, duplicate re-acks and footnote-4 ack requests when no buffer
// is free are the protocol's own and answered under every policy.
#pragma once

#include <cstdint>

#include <memory>
#include <string_view>

#include "recovery/buffer_pool.h"
#include "recovery/clock.h"
#include "recovery/link_state.h"

namespace bsp::recovery {

struct PolicyContext {
  Time now;
  Duration srtt;
  const BufferPool& pool;
  std::size_t sendable;       // buffers send() may still take (the pool keeps a share for arrivals)
  std::size_t send_capacity;  // the most buffers sends may hold
  int nprocs;
  std::size_t link_window = SIZE_MAX;    // the most frames one link may hold unacknowledged
  std::size_t link_sendable = SIZE_MAX;  // frames the link being sent on may still take
};

enum class AckDecision {
  none,          // no explicit ack (a piggy-backed one may still go)
  end_of_round,  // one explicit ack at the end of this receive round (coalesced)
  this_frame,    // an explicit ack for this very frame
};

class AckPolicy {
 public:
  virtual ~AckPolicy() = default;
  virtual std::string_view name() const = 0;
  // Sender: the data frame about to be transmitted on link: flag it ack-requested?
  virtual bool request_ack(const PolicyContext& context, SendLink& link) = 0;
  // Sender: link's cumulative ack advanced.
  virtual void on_acked(const PolicyContext& context, SendLink& link) {
    (void)context;
    (void)link;
  }
  // Receiver: a data frame was accepted on link (since_ack and peer_asked updated).
  virtual AckDecision on_data(const PolicyContext& context, const ReceiveLink& link) = 0;
  // True when the peer's advertised credit limits new transmissions (pupa).
  virtual bool flow_control() const { return false; }
  // True when every data frame is acked at once, so any ack times the round trip.
  virtual bool acks_every_frame() const { return false; }
};

// "buffer", "every" or "pupa"; throws std::runtime_error naming the known ones otherwise.
std::unique_ptr<AckPolicy> make_ack_policy(std::string_view name);

std::unique_ptr<AckPolicy> make_buffer_ack_policy();
std::unique_ptr<AckPolicy> make_every_ack_policy();
std::unique_ptr<AckPolicy> make_pupa_ack_policy();

}  // namespace bsp::recovery
