// recovery/protocol_core.h: the reliable protocol itself, free of sockets: per-link state
// machines (recovery/link_state.h), the shared buffer pool, and the ack policy, driven by
// an injected clock and a frame output. recovery/reliable_channel.cc runs it over a
// transport; the deterministic tests run it over an in-memory lossy network with a manual
// clock, so every loss pattern is exercised without sockets or sleeps.
//
// Recovery is receiver-based and selective (paper 001 §2.2): the receiver notices a gap
// from the sequence numbers and NACKs exactly the missing ranges; the sender resends only
// those. Tail loss (nothing later reveals the gap) is found by probes: a receiver the
// engine waits on probes a silent peer after an RTT-derived, backed-off interval; a
// sender whose link went quiet with frames unacknowledged probes with the ack-request
// flag. Every report (ack, NACK, probe) says how far its sender has transmitted, so the
// other side learns of a lost tail and NACKs exactly it: nothing is resent blindly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "recovery/ack_policy.h"
#include "recovery/buffer_pool.h"
#include "recovery/channel.h"
#include "recovery/clock.h"
#include "recovery/frame_codec.h"
#include "recovery/link_report.h"
#include "recovery/link_state.h"
#include "recovery/rtt_estimator.h"
#include "recovery/stats.h"
#include "recovery/wire.h"
#include "transport/transport.h"

namespace bsp::recovery {

struct CoreConfig {
  int pid = 0;
  int nprocs = 1;
  std::uint32_t job_id = 0;
  std::size_t buffers = 0;  // pool size n (0: 8 MiB of MTU-sized buffers, 1024..4096)
  std::size_t mtu = 0;      // largest frame, header included
  std::string ack_policy = "buffer";
  auth::Key secret{};  // the job's secret: frames are sealed and checked with it
};

// Where the core's frames go: the transport, or an in-memory network in tests.
class FrameOutput {
 public:
  virtual ~FrameOutput() = default;
  // Hands frames over from the front until one is refused; returns how many were taken.
  // Frame bytes are only valid during the call.
  virtual std::size_t send_batch(std::span<const transport::OutFrame> frames) = 0;
};

class ProtocolCore {
 public:
  // Throws std::runtime_error for a bad configuration (unknown policy, MTU too small).
  ProtocolCore(const CoreConfig& config, const Clock& clock, FrameOutput& output);
  ~ProtocolCore();
  ProtocolCore(const ProtocolCore&) = delete;
  ProtocolCore& operator=(const ProtocolCore&) = delete;

  std::size_t max_payload() const;

  // Copies payload into a pool buffer queued for peer; transmits when enough are queued.
  // no_buffer: the pool is empty; links holding many unacknowledged buffers were asked
  // for an ack (paper 001, footnote 4) and the caller should consume arrivals.
  SendResult send(int peer, std::span<const std::byte> payload);

  // One arrived frame (from: the transport's idea of the sender, or -1). In-order
  // payloads go to sink; returns how many were delivered.
  std::size_t on_frame(int from, std::span<const std::byte> frame, PayloadSink& sink);

  // Placement (udp): the peer whose next frames are expected to be full data frames in
  // order (a bulk transfer is arriving), or -1.
  int placement_peer() const { return placement_peer_; }
  // A frame whose payload was read straight into the sink's room (PayloadSink::
  // payload_room). True: it verified (MAC over exactly these bytes), is a data frame from
  // `from`, the next in order, with nothing held behind it, and was taken (counted,
  // acknowledged as any frame): the caller confirms its bytes to the sink. False: nothing
  // changed; the caller delivers a copy of the frame by on_frame (which judges it whole).
  bool take_placed(int from, std::span<const std::byte> head, std::span<const std::byte> payload);

  // Transmits queued frames and resends, fires due timers (NACK retry, quiet-link probe)
  // unless told the arrivals are not all read yet (a NACK or probe sent then could ask
  // for what is waiting unread), sends the acks/NACKs/answers owed.
  void service(bool timers = true);
  // Sends the acks and probe answers owed so far, between two batches of arrivals: a
  // sender whose window is full waits for them, and should not wait until the receiver
  // has drained its whole socket (no timers fire, no NACK goes: the rest may be unread).
  void send_owed_acks();
  // service() for a caller about to block waiting for `awaited`: also probes those that
  // stayed silent for a retry interval (tail loss on their links).
  void service_waiting(std::span<const int> awaited);

  // When the next timer falls due (Time::max(): none).
  Time next_deadline() const;
  // True when service() has something to transmit right now.
  bool output_pending() const;
  // Every frame sent was acknowledged.
  bool all_acknowledged() const;

  // Writes the current piggy-backed ack and credit into a frame about to leave and
  // reseals it (the transport's transmit hook: "gathered send", paper 001 §2.3).
  void refresh_header(int peer, std::span<std::byte> frame);

  const ChannelStats& stats() const { return stats_; }
  std::string_view policy_name() const { return policy_->name(); }
  // Links looked at by the per-link sweeps (service, transmit, next_deadline, ...) so far:
  // the sweeps visit only the links with work (active_), not all p.
  std::uint64_t links_visited() const { return links_visited_; }
  std::size_t active_links() const { return active_.size(); }
  Duration srtt() const { return rtt_.srtt(); }
  std::size_t free_buffers() const { return pool_.free_count(); }

 private:
  struct Staged {
    int peer;
    std::uint64_t seq;
    bool resend;
    bool ack_request;
    std::uint64_t ack;
    std::uint32_t credit;
  };
  struct ControlFrame {
    int peer = 0;
    std::vector<std::byte> bytes;
  };

  PolicyContext context(Time now) const;
  void transmit();
  void stage(int peer, OutstandingFrame& frame, bool resend);
  bool flush_batch();
  void note_ack_sent(int peer, std::uint64_t ack, std::uint32_t credit);
  std::uint32_t credit_for(int peer);
  wire::Header header_to(int peer, wire::FrameType type, bool ack_request, std::uint64_t ack,
                         std::uint32_t credit) const;
  bool credit_allows(const SendLink& link) const;

  void take_ack(int peer, std::uint32_t wire_ack, bool explicit_ack, Time now);
  // placed: the payload was copied into sink's room (copy_room) while it was verified;
  // taken in order, the room is confirmed and *placed cleared (else the caller gives it up).
  std::size_t take_data(int peer, const wire::Header& header, std::span<const std::byte> payload, PayloadSink& sink,
                        Time now, bool* placed);
  // Room in sink for frame's payload when its header, read but not yet trusted, makes it
  // the next data frame in order from its sender with nothing held behind it; peer
  // receives that sender. Empty otherwise (or when frames carry no MAC to fuse with).
  std::span<std::byte> copy_room(int from, std::span<const std::byte> frame, PayloadSink& sink, int& peer);
  void take_report(int peer, const LinkReport& report, Time now);
  void take_sender_news(int peer, const wire::Header& header, bool report_follows, Time now);
  void heard_data(ReceiveLink& link, const wire::Header& header, Time now);
  void note_in_order(int peer, std::size_t payload_size);
  void after_in_order(ReceiveLink& link);
  void acknowledge_data(int peer, Time now);
  void queue_resend(SendLink& link, std::uint64_t seq, Time now);

  bool sender_waiting(const SendLink& link) const;
  Time sender_probe_due(const SendLink& link) const;
  Time receiver_probe_due(const ReceiveLink& link) const;
  Time idle_ack_due(const ReceiveLink& link) const;
  void emit_report(int peer, wire::FrameType type, bool answer, std::uint32_t echo, bool ack_request, Time now);
  void emit_probe(int peer, Time now);
  void emit_owed(int peer, Time now);
  void flush_control();
  void ask_for_acks();

  // The active set: peers whose links may have work (frames queued or unacknowledged,
  // resends, an ack/NACK/answer owed, a gap or held frames, an awaited peer, pupa credit
  // to re-advertise). Every event that can give a link work activates its peer; service()
  // drops the peers whose links are idle again. Kept sorted by pid, so every sweep visits
  // peers in the same order as a sweep over all p did.
  void activate(int peer);
  bool link_idle(int peer) const;

  CoreConfig config_;
  wire::FrameKey frame_key_;
  const Clock& clock_;
  FrameOutput& output_;
  BufferPool pool_;
  std::unique_ptr<AckPolicy> policy_;
  RttEstimator rtt_;
  std::vector<SendLink> send_;
  std::vector<ReceiveLink> receive_;
  std::size_t max_ranges_;
  std::size_t receive_reserve_;
  std::size_t send_reserve_;
  std::size_t link_window_;  // most frames one link may hold unacknowledged
  std::size_t untransmitted_ = 0;
  std::size_t untransmitted_bytes_ = 0;  // their frames' bytes
  int round_robin_ = 0;
  std::vector<int> active_;      // sorted pids
  std::vector<char> is_active_;  // by pid
  mutable std::uint64_t links_visited_ = 0;
  bool awaiting_ = false;    // the last service_waiting() named peers the engine waits for
  int placement_peer_ = -1;  // see placement_peer()

  std::vector<transport::OutFrame> batch_;
  std::vector<Staged> staged_;
  Time batch_time_{};  // when the first frame of batch_ was staged
  std::vector<ControlFrame> control_;
  std::size_t control_count_ = 0;
  std::vector<transport::OutFrame> control_batch_;
  ChannelStats stats_;
};

}  // namespace bsp::recovery
