// recovery/link_state.h: the per-link state of the reliable protocol as explicit queues,
// after ENet's peer: on the sending side the frames not yet acknowledged (each knowing
// when it was last sent and how often), which of them were never transmitted, and which
// were asked for again; on the receiving side the next expected sequence number, the
// out-of-order frames held in pool buffers, and the acks, NACKs and probe answers owed.
// Sequence numbers are 64-bit here (extended from the 32-bit wire field), so wrap-around
// never confuses an ordering.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>

#include "recovery/buffer_pool.h"
#include "recovery/clock.h"
#include "recovery/frame_codec.h"
#include "recovery/protocol_constants.h"

namespace bsp::recovery {

// Extends a 32-bit wire sequence number to 64 bits next to a reference value.
inline std::uint64_t extend_seq(std::uint64_t reference, std::uint32_t wire) {
  auto delta = static_cast<std::int32_t>(wire - static_cast<std::uint32_t>(reference));
  if (delta < 0 && static_cast<std::uint64_t>(-static_cast<std::int64_t>(delta)) > reference) return 0;
  return reference + static_cast<std::uint64_t>(static_cast<std::int64_t>(delta));
}

// One data frame on a send queue: [Header][payload] in a pool buffer.
struct OutstandingFrame {
  std::uint64_t seq = 0;
  BufferPool::Id buffer = 0;
  std::uint16_t size = 0;          // frame bytes, header included
  wire::PayloadSeal payload_seal;  // the payload's MAC and check state (wire::copy_payload), for every seal
  std::uint16_t sends = 0;         // transmissions so far (0: never transmitted)
  bool ack_requested = false;      // the last transmission carried the ack-request flag
  bool resend_queued = false;      // on SendLink::resends
  Time last_sent{};
};

struct SendLink {
  std::uint64_t acked = 0;             // every seq < acked is acknowledged (queue front's seq)
  std::uint64_t next_new = 0;          // first seq never transmitted
  std::uint64_t next_seq = 0;          // seq the next send() gets
  std::uint64_t asked_end = 0;         // one past the last seq transmitted with the ack-request flag
  std::deque<OutstandingFrame> queue;  // seqs [acked, next_seq), in order
  std::deque<std::uint64_t> resends;   // seqs the receiver asked for again

  Time last_activity{};   // last transmission to, or ack progress from, this peer
  Time last_probe{};      // last ack-request probe (quiet link, or no free buffer)
  int probe_backoff = 0;  // unanswered ack-request probes in a row

  bool ack_required = false;                        // pupa: the sender is in its "acknowledgement required" state
  std::uint32_t credit = tuning::kUnlimitedCredit;  // pupa: new frames the peer still takes

  OutstandingFrame* find(std::uint64_t seq) {
    if (seq < acked || seq >= next_seq) return nullptr;
    return &queue[static_cast<std::size_t>(seq - acked)];
  }
  std::size_t in_flight() const { return static_cast<std::size_t>(next_new - acked); }
  // Frames holding a buffer on this link: in flight, or sent by the engine and not yet
  // transmitted (what the link window bounds).
  std::size_t queued() const { return static_cast<std::size_t>(next_seq - acked); }
  bool has_untransmitted() const { return next_new < next_seq; }
};

// An out-of-order frame's payload, waiting for the gap before it to be filled.
struct HeldFrame {
  BufferPool::Id buffer = 0;
  std::uint16_t length = 0;  // payload bytes
};

struct ReceiveLink {
  std::uint64_t expected = 0;               // every seq < expected was delivered, in order
  std::uint64_t received_end = 0;           // one past the highest seq seen (>= expected)
  std::map<std::uint64_t, HeldFrame> held;  // out-of-order frames, by seq

  std::size_t since_ack = 0;  // data frames accepted since the last ack told to the peer
  bool peer_asked = false;    // a frame carried the ack-request flag since that ack
  bool ack_owed = false;      // an explicit ack goes out at the end of this round
  bool nack_owed = false;     // a NACK (missing ranges) goes out at the end of this round
  bool answer_owed = false;   // a probe asked for our state: report + echo
  std::uint32_t echo = 0;     // the probe stamp to echo

  Time last_nack{};  // last NACK listing every gap (retried after a backed-off interval)
  int nack_backoff = 0;
  bool nack_retry = false;       // the owed NACK is the retry: it lists every gap again
  std::uint64_t nacked_end = 0;  // gaps below this were NACKed: a NACK for a new gap lists
                                 // only what lies past it (resends of the rest are on the way)

  Time last_heard{};     // last valid frame from the peer
  bool awaited = false;  // the engine waits for this peer (set by Channel::wait)
  Time awaited_since{};
  Time last_probe{};  // last probe we sent because we were waiting for the peer
  int probe_backoff = 0;

  // Lowest seq refused for want of a buffer (kNone: none). Reports stop there until the
  // frames before it are delivered, then ask for it and what follows, in order.
  static constexpr std::uint64_t kNone = ~std::uint64_t{0};
  std::uint64_t overflow_from = kNone;
  bool overflowed = false;                                     // pupa: zero credit advertised until the gap is closed
  std::uint32_t advertised_credit = tuning::kUnlimitedCredit;  // last credit we sent

  bool has_gap() const { return received_end > expected; }
};

}  // namespace bsp::recovery
