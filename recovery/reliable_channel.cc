// recovery/reliable_channel.cc: ProtocolCore over a transport. progress() transmits what
// is queued, drains the transport in batches through the core, then sends what the round
// owes (acks, NACKs, resends). wait() serves the timers, spins briefly (asking the
// transport's ready() where it reads memory, else poll(2)), then blocks in poll() on the
// transport's descriptor no longer than the next timer.
#include "recovery/reliable_channel.h"

#include <poll.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "recovery/protocol_core.h"
#include "recovery/wait_for_fd.h"

namespace bsp::recovery {
namespace {

bool readable(int fd) {
  pollfd waiter{fd, POLLIN, 0};
  return ::poll(&waiter, 1, 0) > 0;
}

class ReliableChannel final : public Channel, private transport::FrameSink, private FrameOutput {
 public:
  ReliableChannel(std::unique_ptr<transport::Transport> transport, const ChannelConfig& config)
      : transport_(std::move(transport)),
        spin_us_(config.spin_us),
        also_wait_fd_(config.also_wait_fd),
        ready_in_memory_(transport_->capabilities().ready_in_memory),
        core_(CoreConfig{config.pid, config.nprocs, config.job_id,
                         config.buffers ? config.buffers : transport_->capabilities().pool_frames,
                         transport_->capabilities().mtu, config.ack_policy, config.secret},
              clock_, *this) {
    if (auto* hooks = transport_->transmit_hooks()) {
      hooks->set_transmit_hook([this](int peer, std::span<std::byte> frame) { core_.refresh_header(peer, frame); });
    }
  }

  ~ReliableChannel() override {
    if (auto* hooks = transport_->transmit_hooks()) hooks->set_transmit_hook(nullptr);
  }

  std::size_t max_payload() const override { return core_.max_payload(); }

  SendResult send(int peer, std::span<const std::byte> payload) override { return core_.send(peer, payload); }

  std::size_t progress(PayloadSink& sink) override {
    sink_ = &sink;
    delivered_ = 0;
    core_.service();
    bool drained = false;
    for (int round = 0; round < tuning::kReceiveRoundsPerProgress && !drained; ++round) {
      drained = transport_->receive(*this, tuning::kReceiveBatch) < tuning::kReceiveBatch;
      if (!drained) core_.send_owed_acks();
    }
    core_.service(drained);
    transport_->flush();
    sink_ = nullptr;
    return delivered_;
  }

  bool probe() override { return core_.output_pending() || frames_ready(); }

  void wait(std::span<const int> awaited, std::chrono::microseconds timeout) override {
    core_.service_waiting(awaited);
    bool flushed = transport_->flush();
    if (core_.output_pending()) return;
    Time now = clock_.now();
    Time due = std::min(core_.next_deadline(), now + std::chrono::duration_cast<Duration>(timeout));
    // Frames the kernel would not take yet (nic: the socket's send budget is in the
    // qdisc) wake nobody when it drains: come back soon to push them again.
    if (!flushed) due = std::min(due, now + tuning::kPendingFlushRetry);
    auto left = std::chrono::duration_cast<std::chrono::microseconds>(due - now);
    if (left.count() <= 0) return;
    spin_then_block(
        transport_->wait_fd(), spin_us_, left, [this] { return frames_ready(); }, also_wait_fd_);
  }

  int wait_fd() const override { return transport_->wait_fd(); }
  bool all_acknowledged() const override { return core_.all_acknowledged() && transport_->flush(); }
  const ChannelStats& stats() const override { return core_.stats(); }
  const transport::Transport& transport() const override { return *transport_; }

 private:
  // Whether the transport has frames: its ready() where that reads memory, else poll(2).
  bool frames_ready() { return ready_in_memory_ ? transport_->ready() : readable(transport_->wait_fd()); }

  void on_frame(int peer, std::span<const std::byte> frame) override {
    if (sink_ != nullptr) delivered_ += core_.on_frame(peer, frame, *sink_);
  }

  void on_peer_lost(int peer, std::string_view why) override {
    if (sink_ != nullptr) sink_->on_peer_lost(peer, why);
  }

  // Datagram placement (transport.h): while a bulk transfer arrives from one peer, udp
  // reads each datagram's payloads straight to the end of that peer's record stream
  // (PayloadSink::payload_room). Bytes there count only once confirmed, and only the
  // frames that verified (MAC over exactly the placed bytes), in order and contiguous from
  // the room's start are confirmed; the rest are copied out and judged by on_frame.
  std::size_t placement_head() const override { return wire::kHeaderSize; }

  DatagramRoom datagram_room(std::size_t frame_size, std::size_t frames) override {
    const int peer = core_.placement_peer();
    const std::size_t payload = core_.max_payload();
    if (sink_ == nullptr || peer < 0 || frames == 0 || frame_size != payload + wire::kHeaderSize) return {};
    std::span<std::byte> room = sink_->payload_room(peer, frames * payload);
    if (room.size() != frames * payload) {
      if (!room.empty()) sink_->payload_abandoned(peer);
      return {};
    }
    room_ = room;
    room_peer_ = peer;
    return {peer, room};
  }

  void on_datagram_placed(int from, std::span<const PlacedFrame> frames) override {
    if (room_peer_ < 0) return;  // no room outstanding: nothing can lie in one
    const int peer = room_peer_;
    room_peer_ = -1;
    std::size_t taken = 0, placed = 0;
    if (from == peer) {
      for (; taken < frames.size(); ++taken) {
        const PlacedFrame& frame = frames[taken];
        if (frame.payload.data() != room_.data() + placed || frame.payload.size() > room_.size() - placed) break;
        if (!core_.take_placed(from, frame.head, frame.payload)) break;
        placed += frame.payload.size();
      }
    }
    // The frames not taken are copied out first: the room lies past the stream's end, where
    // on_frame's payloads will be written.
    scratch_.clear();
    for (std::size_t i = taken; i < frames.size(); ++i) {
      scratch_.insert(scratch_.end(), frames[i].head.begin(), frames[i].head.end());
      scratch_.insert(scratch_.end(), frames[i].payload.begin(), frames[i].payload.end());
    }
    if (placed > 0) {
      // The verified prefix is stored: the room asked again for its size begins where the
      // first did (channel.h), nothing having changed the stream meanwhile.
      std::span<std::byte> kept = sink_->payload_room(peer, placed);
      if (kept.data() != room_.data()) std::memmove(kept.data(), room_.data(), placed);
      sink_->on_payload_placed(peer);
      delivered_ += taken;
    } else {
      sink_->payload_abandoned(peer);
    }
    room_ = {};
    std::size_t at = 0;
    for (std::size_t i = taken; i < frames.size(); ++i) {
      std::size_t size = frames[i].head.size() + frames[i].payload.size();
      on_frame(from, std::span<const std::byte>(scratch_).subspan(at, size));
      at += size;
    }
  }

  std::size_t send_batch(std::span<const transport::OutFrame> frames) override {
    return transport_->send_batch(frames);
  }

  SteadyClock clock_;
  std::unique_ptr<transport::Transport> transport_;
  int spin_us_;
  int also_wait_fd_;
  bool ready_in_memory_;
  ProtocolCore core_;
  PayloadSink* sink_ = nullptr;
  std::size_t delivered_ = 0;
  // Datagram placement: the room outstanding (room_peer_ -1: none), and where frames not
  // placed are copied before on_frame judges them.
  std::span<std::byte> room_;
  int room_peer_ = -1;
  std::vector<std::byte> scratch_;
};

}  // namespace

std::unique_ptr<Channel> make_reliable_channel(std::unique_ptr<transport::Transport> transport,
                                               const ChannelConfig& config) {
  return std::make_unique<ReliableChannel>(std::move(transport), config);
}

}  // namespace bsp::recovery
