// recovery/protocol_core.cc: sending, receiving, selective recovery, probes and acks of
// the reliable protocol (see protocol_core.h for the scheme).
#include "recovery/protocol_core.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "recovery/frame_codec.h"

namespace bsp::recovery {
namespace {

using wire::FrameType;
using wire::Header;

Header read_header(std::span<const std::byte> frame) {
  Header header;
  std::memcpy(&header, frame.data(), wire::kHeaderSize);
  return header;
}

void write_header(std::span<std::byte> frame, const Header& header) {
  std::memcpy(frame.data(), &header, wire::kHeaderSize);
}

// A probe's stamp: microseconds, never 0 (0 means "no echo").
std::uint32_t stamp_of(Time now) {
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count();
  return static_cast<std::uint32_t>(us) | 1u;
}

}  // namespace

ProtocolCore::ProtocolCore(const CoreConfig& config, const Clock& clock, FrameOutput& output)
    : config_(config),
      frame_key_(wire::frame_key(config.secret)),
      clock_(clock),
      output_(output),
      pool_(pool_frames(config.buffers, config.mtu, config.nprocs), config.mtu),
      policy_(make_ack_policy(config.ack_policy)),
      send_(static_cast<std::size_t>(config.nprocs)),
      receive_(static_cast<std::size_t>(config.nprocs)),
      is_active_(static_cast<std::size_t>(std::max(config.nprocs, 0)), 0) {
  if (config.mtu < wire::kHeaderSize + report_size(1) + 1) {
    throw std::runtime_error("reliable channel: transport MTU " + std::to_string(config.mtu) +
                             " is too small for the wire header");
  }
  if (config.nprocs < 1 || config.pid < 0 || config.pid >= config.nprocs) {
    throw std::runtime_error("reliable channel: pid " + std::to_string(config.pid) + " out of range for " +
                             std::to_string(config.nprocs) + " processes");
  }
  max_ranges_ = std::min(tuning::kMaxRangesPerReport,
                         (config.mtu - wire::kHeaderSize - kReportHeadSize) / kReportRangeSize);
  receive_reserve_ = pool_.capacity() / tuning::kReceiveReserveDivisor;
  send_reserve_ = pool_.capacity() / tuning::kSendReserveDivisor;
  // A default pool (pool_frames) is large enough for the rule to give kMinLinkWindow or more.
  link_window_ = std::max(tuning::kMinLinkWindow, pool_.capacity() / tuning::kLinkWindowDivisor /
                                                      static_cast<std::size_t>(std::max(1, config.nprocs - 1)));
  Time now = clock_.now();
  for (SendLink& link : send_) link.last_activity = link.last_probe = now;
  for (ReceiveLink& link : receive_) link.last_heard = link.last_nack = link.last_probe = now;
  batch_.reserve(tuning::kSendBatch);
  staged_.reserve(tuning::kSendBatch);
}

ProtocolCore::~ProtocolCore() = default;

std::size_t ProtocolCore::max_payload() const { return std::min<std::size_t>(config_.mtu - wire::kHeaderSize, 0xFFFF); }

PolicyContext ProtocolCore::context(Time now) const {
  std::size_t free = pool_.free_count();
  return PolicyContext{now,
                       rtt_.srtt(),
                       pool_,
                       free > send_reserve_ ? free - send_reserve_ : 0,
                       pool_.capacity() - send_reserve_,
                       config_.nprocs,
                       link_window_};
}

// ---------------------------------------------------------------- sending

SendResult ProtocolCore::send(int peer, std::span<const std::byte> payload) {
  if (peer < 0 || peer >= config_.nprocs || peer == config_.pid || payload.size() > max_payload()) {
    throw std::logic_error("reliable channel: send to pid " + std::to_string(peer) + " of " +
                           std::to_string(payload.size()) + " bytes is not allowed");
  }
  SendLink& link = send_[static_cast<std::size_t>(peer)];
  std::optional<BufferPool::Id> buffer;
  if (pool_.free_count() > send_reserve_ && link.queued() < link_window_) buffer = pool_.acquire();
  if (!buffer) {
    ++stats_.send_buffer_waits;
    ask_for_acks();
    return SendResult::no_buffer;
  }
  // Built where it stays (a copy of a frame built apart waited on its narrow stores). The
  // header is written when the frame is staged, with that transmission's fields.
  OutstandingFrame& frame = link.queue.emplace_back();
  // The copy into the pool, the payload's MAC and its fold in one pass; every transmission seals
  // with them (the payload does not change until acknowledged).
  frame.payload_seal = wire::copy_payload(pool_.bytes(*buffer).data() + wire::kHeaderSize, payload, frame_key_);
  frame.seq = link.next_seq++;
  frame.buffer = *buffer;
  frame.size = static_cast<std::uint16_t>(wire::kHeaderSize + payload.size());
  activate(peer);
  untransmitted_bytes_ += frame.size;
  if (++untransmitted_ >= tuning::kAutoTransmit || untransmitted_bytes_ >= tuning::kAutoTransmitBytes) transmit();
  return SendResult::ok;
}

// Paper 001, footnote 4: with no buffer free, ask the links holding many unacknowledged
// buffers for an ack (a probe with the ack-request flag, answered under every policy),
// at most once per round trip per link.
void ProtocolCore::ask_for_acks() {
  Time now = clock_.now();
  std::size_t threshold = std::max<std::size_t>(1, pool_.capacity() / (2 * static_cast<std::size_t>(config_.nprocs)));
  int busiest = -1;
  std::size_t most = 0;
  bool asked = false;
  for (int peer : active_) {  // a link with frames in flight is active
    ++links_visited_;
    SendLink& link = send_[static_cast<std::size_t>(peer)];
    if (link.in_flight() > most) {
      most = link.in_flight();
      busiest = peer;
    }
    if (link.in_flight() >= threshold && now - link.last_probe >= rtt_.srtt()) {
      emit_probe(peer, now);
      asked = true;
    }
  }
  if (!asked && busiest >= 0 && now - send_[static_cast<std::size_t>(busiest)].last_probe >= rtt_.srtt()) {
    emit_probe(busiest, now);
  }
  flush_control();
}

bool ProtocolCore::credit_allows(const SendLink& link) const { return !policy_->flow_control() || link.credit > 0; }

// Pupa's optimistic flow control over a shared pool: unlimited credit until an
// out-of-order frame finds no buffer (overflow); then zero, so the sender only resends
// what is missing, until the gap is closed: in-order frames need no buffer, so from then
// on the link takes anything again.
std::uint32_t ProtocolCore::credit_for(int peer) {
  std::size_t free = pool_.free_count();
  if (!policy_->flow_control()) return static_cast<std::uint32_t>(free);
  ReceiveLink& link = receive_[static_cast<std::size_t>(peer)];
  if (link.overflowed && !link.has_gap()) link.overflowed = false;
  return link.overflowed ? 0 : tuning::kUnlimitedCredit;
}

void ProtocolCore::note_ack_sent(int peer, std::uint64_t ack, std::uint32_t credit) {
  ReceiveLink& link = receive_[static_cast<std::size_t>(peer)];
  link.advertised_credit = credit;
  if (ack == link.expected) {
    link.since_ack = 0;
    link.peer_asked = false;
    link.ack_owed = false;
  }
}

void ProtocolCore::transmit() {
  bool open = true;
  // The active peers in the order (round_robin_ + step) % p of a sweep over all p: only
  // they can have anything to transmit.
  const std::size_t count = active_.size();
  const std::size_t first = static_cast<std::size_t>(std::lower_bound(active_.begin(), active_.end(), round_robin_) -
                                                     active_.begin());
  for (std::size_t step = 0; step < count && open; ++step) {
    int peer = active_[(first + step) % count];
    ++links_visited_;
    SendLink& link = send_[static_cast<std::size_t>(peer)];
    while (open && !link.resends.empty()) {
      std::uint64_t seq = link.resends.front();
      link.resends.pop_front();
      OutstandingFrame* frame = link.find(seq);
      if (frame == nullptr || !frame->resend_queued) continue;
      frame->resend_queued = false;
      stage(peer, *frame, true);
      if (batch_.size() == tuning::kSendBatch) open = flush_batch();
    }
    while (open && link.has_untransmitted() && credit_allows(link)) {
      OutstandingFrame* frame = link.find(link.next_new);
      ++link.next_new;
      if (policy_->flow_control() && link.credit != tuning::kUnlimitedCredit) --link.credit;
      stage(peer, *frame, false);
      if (batch_.size() == tuning::kSendBatch) open = flush_batch();
    }
  }
  if (open) flush_batch();
  round_robin_ = (round_robin_ + 1) % config_.nprocs;
}

// The fields every frame to peer carries (seq, magic, length, check and mac aside).
Header ProtocolCore::header_to(int peer, FrameType type, bool ack_request, std::uint64_t ack,
                               std::uint32_t credit) const {
  Header header{};
  header.type = static_cast<std::uint8_t>(type);
  header.flags = ack_request ? wire::kFlagAckRequest : 0;
  header.job_id = config_.job_id;
  header.src = static_cast<std::uint16_t>(config_.pid);
  header.dst = static_cast<std::uint16_t>(peer);
  header.ack = static_cast<std::uint32_t>(ack);
  header.credit = wire::encode_credit(credit);
  return header;
}

// Writes the fresh protocol fields (piggy-backed ack, ack request, credit) into a queued
// frame and puts it on the batch.
void ProtocolCore::stage(int peer, OutstandingFrame& frame, bool resend) {
  // One clock read per batch: the frames of a batch leave within one system call.
  if (batch_.empty()) batch_time_ = clock_.now();
  const Time now = batch_time_;
  SendLink& link = send_[static_cast<std::size_t>(peer)];
  std::span<std::byte> bytes = pool_.bytes(frame.buffer).first(frame.size);
  std::uint64_t ack = receive_[static_cast<std::size_t>(peer)].expected;
  PolicyContext policy_context = context(now);
  policy_context.link_sendable = link_window_ > link.queued() ? link_window_ - link.queued() : 0;
  bool ask = policy_->request_ack(policy_context, link);
  std::uint32_t credit = credit_for(peer);
  Header header = header_to(peer, FrameType::data, ask, ack, credit);
  header.seq = static_cast<std::uint32_t>(frame.seq);
  wire::seal_header(bytes, header, bytes.size() - wire::kHeaderSize, frame_key_, frame.payload_seal);
  batch_.push_back(transport::OutFrame{peer, bytes});
  staged_.emplace_back(peer, frame.seq, resend, ask, ack, credit);
}

// Hands the batch to the output; what it refused goes back on its queues. False when the
// output refused something (stop transmitting for now).
bool ProtocolCore::flush_batch() {
  if (batch_.empty()) return true;
  std::size_t taken = output_.send_batch(batch_);
  Time now = clock_.now();
  for (std::size_t i = 0; i < staged_.size(); ++i) {
    const Staged& staged = staged_[i];
    SendLink& link = send_[static_cast<std::size_t>(staged.peer)];
    OutstandingFrame* frame = link.find(staged.seq);
    if (i < taken) {
      ++frame->sends;
      frame->last_sent = now;
      frame->ack_requested = staged.ack_request;
      if (staged.ack_request) link.asked_end = std::max(link.asked_end, staged.seq + 1);
      link.last_activity = now;
      if (staged.resend) {
        ++stats_.retransmissions;
      } else {
        ++stats_.data_sent;
        stats_.bytes_sent += frame->size - wire::kHeaderSize;
        --untransmitted_;
        untransmitted_bytes_ -= frame->size;
      }
      if (staged.ack_request) ++stats_.ack_requests_sent;
      note_ack_sent(staged.peer, staged.ack, staged.credit);
    } else if (staged.resend) {
      frame->resend_queued = true;
      link.resends.push_back(staged.seq);
    } else {
      link.next_new = std::min(link.next_new, staged.seq);
      if (policy_->flow_control() && link.credit != tuning::kUnlimitedCredit) ++link.credit;
    }
  }
  bool all = taken == batch_.size();
  batch_.clear();
  staged_.clear();
  return all;
}

void ProtocolCore::refresh_header(int peer, std::span<std::byte> frame) {
  if (peer < 0 || peer >= config_.nprocs || frame.size() < wire::kHeaderSize) return;
  Header header = read_header(frame);
  std::uint64_t ack = receive_[static_cast<std::size_t>(peer)].expected;
  std::uint32_t credit = credit_for(peer);
  const std::uint16_t wire_credit = wire::encode_credit(credit);
  if (header.ack == static_cast<std::uint32_t>(ack) && header.credit == wire_credit) return;
  header.ack = static_cast<std::uint32_t>(ack);
  header.credit = wire_credit;
  write_header(frame, header);
  wire::seal_frame(frame, frame_key_);
  note_ack_sent(peer, ack, credit);
}

// ---------------------------------------------------------------- receiving

// Payloads from this size on are copied into the sink's room by the MAC's pass when they
// come next in order (copy_room): one pass over them where verifying and then appending
// to the stream took two. Smaller ones are appended (a room costs two calls).
constexpr std::size_t kCopyRoomFrom = 512;

std::span<std::byte> ProtocolCore::copy_room(int from, std::span<const std::byte> frame, PayloadSink& sink, int& peer) {
  if (!frame_key_.authenticate || frame.size() < wire::kHeaderSize + kCopyRoomFrom) return {};
  const Header header = read_header(frame);
  if (header.magic != wire::kMagic || header.type != static_cast<std::uint8_t>(FrameType::data) ||
      header.length != frame.size() - wire::kHeaderSize || header.job_id != config_.job_id ||
      header.dst != config_.pid || header.src >= config_.nprocs || header.src == config_.pid) {
    return {};
  }
  if (from == transport::kNotAMember || (from >= 0 && from != header.src)) return {};
  const ReceiveLink& link = receive_[header.src];
  if (extend_seq(link.expected, header.seq) != link.expected || !link.held.empty()) return {};
  std::span<std::byte> room = sink.payload_room(header.src, header.length);
  if (room.size() != header.length) {
    if (!room.empty()) sink.payload_abandoned(header.src);
    return {};
  }
  peer = header.src;
  return room;
}

std::size_t ProtocolCore::on_frame(int from, std::span<const std::byte> frame, PayloadSink& sink) {
  Header header;
  // The next data frame in order is verified while its payload is copied into the sink's
  // room, past the end of what the sink holds: the copy is stored only once the frame
  // verified and was taken in order, and given up on every other path (room_guard).
  int room_peer = -1;
  std::span<std::byte> room = copy_room(from, frame, sink, room_peer);
  bool placed = !room.empty();
  struct RoomGuard {
    PayloadSink& sink;
    int peer;
    bool& pending;
    ~RoomGuard() {
      if (pending) sink.payload_abandoned(peer);
    }
  } room_guard{sink, room_peer, placed};
  const wire::Verdict verdict = placed ? wire::check_frame_copy(frame, frame_key_, config_.job_id, config_.pid,
                                                                config_.nprocs, header, room.data())
                                       : wire::check_frame(frame, frame_key_, config_.job_id, config_.pid,
                                                           config_.nprocs, header);
  switch (verdict) {
    case wire::Verdict::ok:
      break;
    case wire::Verdict::malformed:
      ++stats_.malformed_dropped;
      return 0;
    case wire::Verdict::foreign:
      ++stats_.foreign_dropped;
      return 0;
    case wire::Verdict::corrupt:
      ++stats_.corrupt_dropped;
      return 0;
  }
  int peer = header.src;
  if (from == transport::kNotAMember || (from >= 0 && from != peer)) {
    ++stats_.foreign_dropped;  // from no member's address, or claiming another's identity
    return 0;
  }
  activate(peer);
  Time now = clock_.now();
  std::span<const std::byte> payload = frame.subspan(wire::kHeaderSize, header.length);
  auto type = static_cast<FrameType>(header.type);
  std::optional<LinkReport> report;
  if (type != FrameType::data) {
    report = decode_report(payload);
    if (!report) {
      ++stats_.malformed_dropped;
      return 0;
    }
  }
  take_sender_news(peer, header, type == FrameType::ack || type == FrameType::nack, now);
  ReceiveLink& link = receive_[static_cast<std::size_t>(peer)];
  switch (type) {
    case FrameType::data:
      // The room was asked for the sender and length the header named: the verified
      // header names them still, being the same bytes.
      return take_data(peer, header, payload, sink, now, placed && peer == room_peer ? &placed : nullptr);
    case FrameType::ack:
      ++stats_.acks_received;
      take_report(peer, *report, now);
      break;
    case FrameType::nack:
      ++stats_.nacks_received;
      take_report(peer, *report, now);
      break;
    case FrameType::probe: {
      take_report(peer, *report, now);
      // Answer when asked for an ack, or when the prober has not seen all we sent (our
      // answer's sent_end shows it the tail it lost).
      SendLink& sender = send_[static_cast<std::size_t>(peer)];
      bool behind = extend_seq(sender.acked, report->received_end) < sender.next_new;
      if ((header.flags & wire::kFlagAckRequest) != 0 || behind) {
        link.answer_owed = true;
        link.echo = report->echo;
      }
      break;
    }
  }
  return 0;
}

void ProtocolCore::take_ack(int peer, std::uint32_t wire_ack, bool explicit_ack, Time now) {
  SendLink& link = send_[static_cast<std::size_t>(peer)];
  std::uint64_t ack = extend_seq(link.acked, wire_ack);
  if (ack <= link.acked || ack > link.next_new) return;  // stale, or acks what never left
  Duration sample{-1};
  while (link.acked < ack) {
    const OutstandingFrame& frame = link.queue.front();
    // Karn: only a frame sent once, whose ack was asked for and came explicitly, times
    // the round trip.
    if (explicit_ack && frame.sends == 1 && (frame.ack_requested || policy_->acks_every_frame())) {
      sample = now - frame.last_sent;
    }
    pool_.release(frame.buffer);
    link.queue.pop_front();
    ++link.acked;
  }
  if (sample.count() >= 0) rtt_.sample(sample);
  link.last_activity = now;
  link.probe_backoff = 0;
  policy_->on_acked(context(now), link);
}

std::size_t ProtocolCore::take_data(int peer, const Header& header, std::span<const std::byte> payload,
                                    PayloadSink& sink, Time now, bool* placed) {
  ReceiveLink& link = receive_[static_cast<std::size_t>(peer)];
  std::uint64_t seq = extend_seq(link.expected, header.seq);
  // A member never has more than its link window unacknowledged, and this process has
  // acknowledged (at most) everything before `expected`: a frame further ahead cannot
  // come from a correct member, and holding it would pin the shared pool.
  if (seq >= link.expected + tuning::kWindowSlack * link_window_) {
    ++stats_.window_refused;
    return 0;
  }
  heard_data(link, header, now);
  if (seq < link.expected || link.held.contains(seq)) {
    ++stats_.duplicates_received;
    link.ack_owed = true;  // the sender resent: tell it again what we have
    return 0;
  }
  std::size_t delivered = 0;
  if (seq == link.expected) {
    note_in_order(peer, payload.size());
    if (placed != nullptr && *placed) {
      sink.on_payload_placed(peer);  // the room holds exactly this payload, verified
      *placed = false;
      ++stats_.copied_in_place;
    } else {
      sink.on_payload(peer, payload);
    }
    ++delivered;
    while (!link.held.empty() && link.held.begin()->first == link.expected) {
      HeldFrame held = link.held.begin()->second;
      link.held.erase(link.held.begin());
      ++link.expected;
      sink.on_payload(peer, std::span<const std::byte>(pool_.bytes(held.buffer).first(held.length)));
      pool_.release(held.buffer);
      ++delivered;
    }
    after_in_order(link);
  } else {
    if (seq > link.received_end) {
      stats_.gaps_detected += seq - link.received_end;
      link.nack_owed = true;
    }
    link.received_end = std::max(link.received_end, seq + 1);
    std::optional<BufferPool::Id> buffer;
    if (pool_.free_count() > receive_reserve_) buffer = pool_.acquire();
    if (!buffer) {
      // Overflow: not accepted. It is asked for again once the frames before it are in
      // (pupa: zero credit meanwhile, so only resends come).
      ++stats_.overflow_dropped;
      if (policy_->flow_control()) link.overflowed = true;
      link.overflow_from = std::min(link.overflow_from, seq);
      return 0;
    }
    if (!payload.empty()) std::memcpy(pool_.bytes(*buffer).data(), payload.data(), payload.size());
    link.held.emplace(seq, HeldFrame{*buffer, static_cast<std::uint16_t>(payload.size())});
    ++stats_.data_received;
    stats_.bytes_received += payload.size();
  }
  acknowledge_data(peer, now);
  return delivered;
}

// What every verified frame from peer says about our frames to it: its cumulative ack
// (report_follows: an ack or nack whose report is taken next) and its credit.
void ProtocolCore::take_sender_news(int peer, const Header& header, bool report_follows, Time now) {
  take_ack(peer, header.ack, report_follows, now);
  if (policy_->flow_control()) send_[static_cast<std::size_t>(peer)].credit = wire::decode_credit(header.credit);
}

// A data frame within the window arrived from the link's peer: the link is not quiet, and
// the sender may have asked for an ack.
void ProtocolCore::heard_data(ReceiveLink& link, const Header& header, Time now) {
  link.last_heard = now;
  link.probe_backoff = 0;
  if ((header.flags & wire::kFlagAckRequest) != 0) link.peer_asked = true;
}

// The next frame in order from peer is taken (its payload goes to the sink).
void ProtocolCore::note_in_order(int peer, std::size_t payload_size) {
  ReceiveLink& link = receive_[static_cast<std::size_t>(peer)];
  ++stats_.data_received;
  stats_.bytes_received += payload_size;
  ++link.expected;
  // A full payload in order: a bulk transfer, whose next frames udp may read straight into
  // the engine's stream (placement_peer); a shorter one ends it.
  if (payload_size == max_payload()) {
    placement_peer_ = peer;
  } else if (placement_peer_ == peer) {
    placement_peer_ = -1;
  }
}

void ProtocolCore::after_in_order(ReceiveLink& link) {
  link.received_end = std::max(link.received_end, link.expected);
  link.nack_backoff = 0;
  if (link.overflow_from != ReceiveLink::kNone && link.expected >= link.overflow_from) {
    link.overflow_from = ReceiveLink::kNone;  // now ask for the refused ones, in order
    if (link.has_gap()) link.nack_owed = true;
  }
}

// A data frame was accepted: the ack policy decides whether it costs an ack.
void ProtocolCore::acknowledge_data(int peer, Time now) {
  ReceiveLink& link = receive_[static_cast<std::size_t>(peer)];
  ++link.since_ack;
  switch (policy_->on_data(context(now), link)) {
    case AckDecision::none:
      break;
    case AckDecision::end_of_round:
      link.ack_owed = true;
      break;
    case AckDecision::this_frame:
      emit_report(peer, FrameType::ack, false, 0, false, now);
      break;
  }
}

// Placement (protocol_core.h): only the one case that needs no copy is taken here, a
// verified data frame that is next in order with nothing held behind it; anything else is
// left untouched for on_frame.
bool ProtocolCore::take_placed(int from, std::span<const std::byte> head, std::span<const std::byte> payload) {
  Header header;
  if (wire::check_parts(head, payload, frame_key_, config_.job_id, config_.pid, config_.nprocs, header) !=
      wire::Verdict::ok) {
    return false;
  }
  const int peer = header.src;
  if (header.type != static_cast<std::uint8_t>(FrameType::data) || from != peer) return false;
  ReceiveLink& link = receive_[static_cast<std::size_t>(peer)];
  if (extend_seq(link.expected, header.seq) != link.expected || !link.held.empty()) return false;
  activate(peer);
  Time now = clock_.now();
  take_sender_news(peer, header, false, now);
  heard_data(link, header, now);
  note_in_order(peer, payload.size());
  ++stats_.placed;
  after_in_order(link);
  acknowledge_data(peer, now);
  return true;
}

// A peer's report: what it holds of our frames (resend the missing ranges), and how far
// it has sent on its link to us (a tail we have not seen is lost: NACK it).
void ProtocolCore::take_report(int peer, const LinkReport& report, Time now) {
  if (report.echo != 0) {
    std::uint32_t elapsed_us = stamp_of(now) - report.echo;
    std::chrono::microseconds elapsed(elapsed_us);
    if (elapsed < tuning::kLongestRttSample) rtt_.sample(elapsed);
  }
  SendLink& link = send_[static_cast<std::size_t>(peer)];
  for (const SeqRange& range : report.missing) {
    std::uint64_t begin = extend_seq(link.acked, range.begin);
    std::uint64_t end = std::min<std::uint64_t>(begin + (range.end - range.begin), link.next_new);
    for (std::uint64_t seq = std::max(begin, link.acked); seq < end; ++seq) queue_resend(link, seq, now);
  }
  ReceiveLink& receiver = receive_[static_cast<std::size_t>(peer)];
  std::uint64_t sent_end = extend_seq(receiver.expected, report.sent_end);
  if (sent_end > receiver.received_end && sent_end <= receiver.expected + tuning::kWindowSlack * link_window_) {
    stats_.gaps_detected += sent_end - receiver.received_end;
    receiver.received_end = sent_end;
    receiver.nack_owed = true;
  }
}

void ProtocolCore::queue_resend(SendLink& link, std::uint64_t seq, Time now) {
  OutstandingFrame* frame = link.find(seq);
  if (frame == nullptr || frame->sends == 0 || frame->resend_queued) return;
  // A frame already resent is not resent again within half a retry interval: repeated
  // requests for it are probably in flight with the resend.
  if (frame->sends >= 2 && now - frame->last_sent < rtt_.retry_interval() / 2) return;
  frame->resend_queued = true;
  link.resends.push_back(seq);
}

// ---------------------------------------------------------------- control frames and timers

void ProtocolCore::emit_report(int peer, FrameType type, bool answer, std::uint32_t echo, bool ack_request, Time now) {
  ReceiveLink& link = receive_[static_cast<std::size_t>(peer)];
  // A NACK for a new gap lists only the gaps not asked for yet; the retry, a probe's
  // answer and an ack turned NACK list them all. Asking again for every open gap whenever
  // another appears made senders resend most frames several times in lossy bursts.
  const bool new_gaps_only = type == FrameType::nack && !answer && !link.nack_retry;
  const std::uint64_t list_from = new_gaps_only ? std::max(link.expected, link.nacked_end) : link.expected;
  // An ack while a gap is open lists the missing ranges too, when it answers a probe or
  // the NACK retry interval has passed (acks of every frame must not become NACK storms).
  if (type == FrameType::ack && link.has_gap() &&
      (answer || now >= link.last_nack + rtt_.retry_interval(link.nack_backoff))) {
    type = FrameType::nack;
  }
  // After an overflow the report ends at the first refused frame; and it never asks for
  // more than the free buffers could hold past the first gap: asking for everything at
  // once would only overflow again.
  std::uint64_t report_end = link.received_end;
  if (link.overflow_from != ReceiveLink::kNone) report_end = std::min(report_end, link.overflow_from);
  std::size_t free = pool_.free_count();
  std::uint64_t window = link.held.size() + 1 + (free > receive_reserve_ ? free - receive_reserve_ : 0);
  report_end = std::min(report_end, link.expected + window);
  LinkReport report;
  report.received_end = static_cast<std::uint32_t>(report_end);
  report.sent_end = static_cast<std::uint32_t>(send_[static_cast<std::size_t>(peer)].next_new);
  report.echo = echo;
  bool listed_all = true;  // false: more ranges than fit, the rest wait for the retry
  if (type != FrameType::ack) {
    std::uint64_t cursor = list_from;
    for (auto it = link.held.lower_bound(list_from); it != link.held.end(); ++it) {
      const std::uint64_t seq = it->first;
      if (seq >= report_end) break;
      if (seq > cursor) {
        if (report.missing.size() == max_ranges_) {
          listed_all = false;
          break;
        }
        report.missing.push_back(SeqRange{static_cast<std::uint32_t>(cursor), static_cast<std::uint32_t>(seq)});
      }
      cursor = seq + 1;
    }
    if (listed_all && cursor < report_end) {
      if (report.missing.size() < max_ranges_) {
        report.missing.push_back(SeqRange{static_cast<std::uint32_t>(cursor), static_cast<std::uint32_t>(report_end)});
      } else {
        listed_all = false;
      }
    }
  }
  if (control_count_ == control_.size()) control_.emplace_back();
  ControlFrame& control = control_[control_count_++];
  control.peer = peer;
  control.bytes.resize(wire::kHeaderSize + report_size(report.missing.size()));
  std::size_t length = encode_report(report, std::span<std::byte>(control.bytes).subspan(wire::kHeaderSize));
  std::uint32_t credit = credit_for(peer);
  write_header(control.bytes, header_to(peer, type, ack_request, link.expected, credit));
  wire::seal_frame(std::span<std::byte>(control.bytes).first(wire::kHeaderSize + length), frame_key_);
  note_ack_sent(peer, link.expected, credit);
  switch (type) {
    case FrameType::ack:
      ++stats_.explicit_acks_sent;
      break;
    case FrameType::nack:
      ++stats_.nacks_sent;
      if (list_from == link.expected) link.last_nack = now;  // it listed every gap
      link.nacked_end = std::max(link.nacked_end,
                                 listed_all ? report_end : static_cast<std::uint64_t>(report.missing.back().end));
      link.nack_owed = false;  // ranges beyond this frame's room: asked for by the retry
      link.nack_retry = false;
      break;
    case FrameType::probe:
      ++stats_.probes_sent;
      break;
    case FrameType::data:
      break;
  }
  if (answer) link.answer_owed = false;
}

void ProtocolCore::emit_probe(int peer, Time now) {
  SendLink& sender = send_[static_cast<std::size_t>(peer)];
  ReceiveLink& receiver = receive_[static_cast<std::size_t>(peer)];
  bool ask = sender_waiting(sender);
  emit_report(peer, FrameType::probe, false, stamp_of(now), ask, now);
  sender.last_probe = now;
  receiver.last_probe = now;
}

bool ProtocolCore::sender_waiting(const SendLink& link) const {
  return link.in_flight() > 0 || (link.has_untransmitted() && !credit_allows(link));
}

Time ProtocolCore::sender_probe_due(const SendLink& link) const {
  if (!sender_waiting(link)) return Time::max();
  Duration quiet = tuning::kSenderProbeIntervals * rtt_.retry_interval(link.probe_backoff);
  // Frames nobody was asked to acknowledge yet, sent while the engine waits for peers:
  // their receivers wait for them too and probe us if they are lost, and the half-window
  // request frees the buffers; an early probe here costs a probe and its answer on every
  // barrier link of a slow superstep.
  if (awaiting_ && link.asked_end <= link.acked && credit_allows(link)) {
    quiet = std::max<Duration>(quiet, tuning::kUnaskedProbeDelay);
  }
  return std::max(link.last_activity, link.last_probe) + quiet;
}

// Frames accepted and not yet acknowledged to the sender (no piggy-backed or explicit ack
// since): one ack for all of them once the link has been quiet a while.
Time ProtocolCore::idle_ack_due(const ReceiveLink& link) const {
  if (link.since_ack == 0 || link.ack_owed || awaiting_) return Time::max();
  return link.last_heard + tuning::kIdleAckIntervals * rtt_.retry_interval();
}

Time ProtocolCore::receiver_probe_due(const ReceiveLink& link) const {
  if (!link.awaited) return Time::max();
  return std::max({link.awaited_since, link.last_heard, link.last_probe}) + rtt_.retry_interval(link.probe_backoff);
}

// Sends what this round owes the peer: the answer to a probe (report with the
// echo), a NACK, or an explicit ack; and pupa's credit update.
void ProtocolCore::emit_owed(int peer, Time now) {
  ReceiveLink& link = receive_[static_cast<std::size_t>(peer)];
  if (policy_->flow_control()) {
    std::uint32_t credit = credit_for(peer);
    if ((link.advertised_credit == 0 && credit > 0) ||
        (link.advertised_credit != tuning::kUnlimitedCredit && credit == tuning::kUnlimitedCredit)) {
      link.ack_owed = true;
    }
  }
  if (link.answer_owed) {
    emit_report(peer, FrameType::ack, true, link.echo, false, now);
  } else if (link.nack_owed) {
    emit_report(peer, FrameType::nack, false, 0, false, now);
  } else if (link.ack_owed) {
    emit_report(peer, FrameType::ack, false, 0, false, now);
  }
}

void ProtocolCore::service(bool timers) {
  transmit();
  Time now = clock_.now();
  for (int peer : active_) {
    ++links_visited_;
    ReceiveLink& receiver = receive_[static_cast<std::size_t>(peer)];
    SendLink& sender = send_[static_cast<std::size_t>(peer)];
    if (timers && receiver.has_gap() && !receiver.nack_owed &&
        now >= receiver.last_nack + rtt_.retry_interval(receiver.nack_backoff)) {
      receiver.nack_owed = true;
      receiver.nack_retry = true;
      ++receiver.nack_backoff;
    }
    if (timers && now >= sender_probe_due(sender)) {
      emit_probe(peer, now);
      ++sender.probe_backoff;
    }
    if (timers && now >= idle_ack_due(receiver)) receiver.ack_owed = true;
    emit_owed(peer, now);
  }
  flush_control();
  // Peers whose links have nothing left to do leave the active set.
  std::size_t kept = 0;
  for (int peer : active_) {
    if (link_idle(peer)) {
      is_active_[static_cast<std::size_t>(peer)] = 0;
    } else {
      active_[kept++] = peer;
    }
  }
  active_.resize(kept);
}

void ProtocolCore::activate(int peer) {
  char& flag = is_active_[static_cast<std::size_t>(peer)];
  if (flag) return;
  flag = 1;
  active_.insert(std::lower_bound(active_.begin(), active_.end(), peer), peer);
}

// True when nothing on the link to or from peer can need a frame or a timer: the
// conditions every sweep (service, transmit, next_deadline, output_pending,
// all_acknowledged) tests are all false.
bool ProtocolCore::link_idle(int peer) const {
  const SendLink& sender = send_[static_cast<std::size_t>(peer)];
  const ReceiveLink& receiver = receive_[static_cast<std::size_t>(peer)];
  if (!sender.queue.empty() || !sender.resends.empty() || sender.acked != sender.next_seq) return false;
  if (receiver.has_gap() || !receiver.held.empty() || receiver.awaited || receiver.since_ack > 0) return false;
  if (receiver.ack_owed || receiver.nack_owed || receiver.answer_owed) return false;
  if (receiver.overflow_from != ReceiveLink::kNone) return false;
  if (policy_->flow_control() && (receiver.overflowed || receiver.advertised_credit != tuning::kUnlimitedCredit)) {
    return false;
  }
  return true;
}

void ProtocolCore::send_owed_acks() {
  Time now = clock_.now();
  for (int peer : active_) {
    ++links_visited_;
    const ReceiveLink& link = receive_[static_cast<std::size_t>(peer)];
    if (!link.nack_owed && (link.ack_owed || link.answer_owed)) emit_owed(peer, now);
  }
  flush_control();
}

void ProtocolCore::service_waiting(std::span<const int> awaited) {
  Time now = clock_.now();
  // A peer no longer awaited is active (an awaited one stays so): only those can change.
  for (int peer : active_) {
    ReceiveLink& link = receive_[static_cast<std::size_t>(peer)];
    if (link.awaited && std::find(awaited.begin(), awaited.end(), peer) == awaited.end()) link.awaited = false;
  }
  awaiting_ = false;
  for (int peer : awaited) {
    if (peer < 0 || peer >= config_.nprocs || peer == config_.pid) continue;
    awaiting_ = true;
    ReceiveLink& link = receive_[static_cast<std::size_t>(peer)];
    if (!link.awaited) link.awaited_since = now;
    link.awaited = true;
    activate(peer);
  }
  service();
  now = clock_.now();
  for (int peer : active_) {
    ++links_visited_;
    ReceiveLink& link = receive_[static_cast<std::size_t>(peer)];
    if (now >= receiver_probe_due(link)) {
      emit_probe(peer, now);
      ++link.probe_backoff;
    }
  }
  flush_control();
}

void ProtocolCore::flush_control() {
  if (control_count_ == 0) return;
  control_batch_.clear();
  for (std::size_t i = 0; i < control_count_; ++i) {
    control_batch_.push_back(transport::OutFrame{control_[i].peer, control_[i].bytes});
  }
  // A control frame the transport refuses is as good as lost: timers ask again.
  std::size_t done = 0;
  while (done < control_batch_.size()) {
    std::size_t taken = output_.send_batch(std::span(control_batch_).subspan(done));
    if (taken == 0) break;
    done += taken;
  }
  control_count_ = 0;
}

Time ProtocolCore::next_deadline() const {
  if (output_pending()) return clock_.now();
  Time due = Time::max();
  for (int peer : active_) {
    ++links_visited_;
    const ReceiveLink& receiver = receive_[static_cast<std::size_t>(peer)];
    const SendLink& sender = send_[static_cast<std::size_t>(peer)];
    if (receiver.has_gap()) due = std::min(due, receiver.last_nack + rtt_.retry_interval(receiver.nack_backoff));
    due = std::min({due, sender_probe_due(sender), receiver_probe_due(receiver), idle_ack_due(receiver)});
  }
  return due;
}

bool ProtocolCore::output_pending() const {
  for (int peer : active_) {
    ++links_visited_;
    const SendLink& sender = send_[static_cast<std::size_t>(peer)];
    const ReceiveLink& receiver = receive_[static_cast<std::size_t>(peer)];
    if (!sender.resends.empty() || (sender.has_untransmitted() && credit_allows(sender))) return true;
    if (receiver.ack_owed || receiver.nack_owed || receiver.answer_owed) return true;
  }
  return false;
}

bool ProtocolCore::all_acknowledged() const {
  for (int peer : active_) {
    ++links_visited_;
    const SendLink& link = send_[static_cast<std::size_t>(peer)];
    if (link.acked != link.next_seq) return false;
  }
  return true;
}

}  // namespace bsp::recovery
