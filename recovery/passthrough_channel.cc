// recovery/passthrough_channel.cc: header stamping and checking over a reliable transport.
#include "recovery/passthrough_channel.h"

#include <poll.h>

#include <cstring>
#include <vector>

#include "recovery/frame_codec.h"
#include "recovery/wait_for_fd.h"

namespace bsp::recovery {
namespace {

class PassthroughChannel final : public Channel, private transport::FrameSink {
 public:
  PassthroughChannel(std::unique_ptr<transport::Transport> transport, const ChannelConfig& config)
      : transport_(std::move(transport)),
        config_(config),
        frame_key_(wire::frame_key(config.secret)),
        next_seq_(static_cast<std::size_t>(config.nprocs), 0),
        expected_seq_(static_cast<std::size_t>(config.nprocs), 0) {
    // A transport whose links were authenticated at set-up needs no MAC per frame if its
    // frames cannot be damaged on their way either (tcp, shared memory): then no check
    // either. The header's 16-bit check is too weak to be a link's only guard against
    // damage, so a link that may damage frames keeps the MAC, whatever its set-up proved.
    const transport::Capabilities& capabilities = transport_->capabilities();
    frame_key_.authenticate = !capabilities.authenticated_links || !capabilities.intact;
    frame_key_.checksum = !capabilities.intact;
  }

  std::size_t max_payload() const override {
    std::size_t limit = transport_->capabilities().mtu - wire::kHeaderSize;
    return std::min<std::size_t>(limit, 0xFFFF);
  }

  // The header is sealed here and the payload goes from where the caller keeps it
  // (the transport gathers both): no copy of the payload in this layer.
  SendResult send(int peer, std::span<const std::byte> payload) override {
    wire::Header header{};
    header.type = static_cast<std::uint8_t>(wire::FrameType::data);
    header.job_id = config_.job_id;
    header.src = static_cast<std::uint16_t>(config_.pid);
    header.dst = static_cast<std::uint16_t>(peer);
    header.seq = next_seq_[static_cast<std::size_t>(peer)];
    std::byte head[wire::kHeaderSize];
    std::memcpy(head, &header, wire::kHeaderSize);
    wire::seal_parts(head, payload, frame_key_);
    if (transport_->send_gathered(peer, head, payload) != transport::SendStatus::sent) {
      ++stats_.send_buffer_waits;
      return SendResult::no_buffer;
    }
    ++next_seq_[static_cast<std::size_t>(peer)];
    ++stats_.data_sent;
    stats_.bytes_sent += payload.size();
    return SendResult::ok;
  }

  std::size_t progress(PayloadSink& sink) override {
    transport_->flush();
    sink_ = &sink;
    delivered_ = 0;
    transport_->receive(*this, 64);
    sink_ = nullptr;
    return delivered_;
  }

  bool probe() override { return transport_->ready(); }

  void wait(std::span<const int>, std::chrono::microseconds timeout) override {
    spin_then_block(*transport_, config_.spin_us, timeout, &spin_history_, config_.spin_extension);
  }

  int wait_fd() const override { return transport_->wait_fd(); }
  std::byte* stage(int peer, std::size_t size, std::uint64_t& token) override {
    transport::Staging* staging = transport_->staging();
    return staging ? staging->stage(peer, size, token) : nullptr;
  }
  std::span<const std::byte> staged(int peer, std::uint64_t token, std::size_t size) override {
    transport::Staging* staging = transport_->staging();
    return staging ? staging->staged(peer, token, size) : std::span<const std::byte>{};
  }
  void next_superstep() override {
    if (transport::Staging* staging = transport_->staging()) staging->next_superstep();
  }
  transport::Staging* staging(int /*peer*/) override { return transport_->staging(); }
  bool all_acknowledged() const override { return transport_->flush(); }
  const ChannelStats& stats() const override { return stats_; }
  const transport::Transport& transport() const override { return *transport_; }

 private:
  void on_frame(int peer, std::span<const std::byte> frame) override {
    wire::Header header;
    switch (wire::check_frame(frame, frame_key_, config_.job_id, config_.pid, config_.nprocs, header)) {
      case wire::Verdict::ok:
        break;
      case wire::Verdict::malformed:
        ++stats_.malformed_dropped;
        return lose(peer, "malformed frame on a reliable transport");
      case wire::Verdict::foreign:
        ++stats_.foreign_dropped;
        return lose(peer, "frame of another job or pid on a reliable transport");
      case wire::Verdict::corrupt:
        ++stats_.corrupt_dropped;
        return lose(peer, "corrupt frame (check mismatch) on a reliable transport");
    }
    if (header.src != peer || header.seq != expected_seq_[static_cast<std::size_t>(peer)]) {
      ++stats_.malformed_dropped;
      return lose(peer, "frame out of sequence on a reliable transport");
    }
    ++expected_seq_[static_cast<std::size_t>(peer)];
    ++stats_.data_received;
    stats_.bytes_received += header.length;
    ++delivered_;
    sink_->on_payload(peer, frame.subspan(wire::kHeaderSize, header.length));
  }

  void on_peer_lost(int peer, std::string_view why) override { sink_->on_peer_lost(peer, why); }

  // Placement (transport.h): where frames carry neither CRC nor MAC (tcp), a data frame's
  // header says all there is to check before its payload is here, so the payload may be
  // read straight into the engine's memory. Any doubt (a header that is not exactly the
  // next data frame from that peer) leaves the frame to on_frame, which judges it whole.
  std::size_t placement_head() const override {
    return frame_key_.checksum || frame_key_.authenticate ? 0 : wire::kHeaderSize;
  }
  std::span<std::byte> place_frame(int peer, std::span<const std::byte> head, std::size_t length) override {
    if (head.size() != wire::kHeaderSize || length < wire::kHeaderSize || sink_ == nullptr) return {};
    wire::Header header;
    std::memcpy(&header, head.data(), wire::kHeaderSize);
    if (header.magic != wire::kMagic || header.type != static_cast<std::uint8_t>(wire::FrameType::data) ||
        header.length != length - wire::kHeaderSize || header.job_id != config_.job_id || header.dst != config_.pid ||
        header.src != peer || header.seq != expected_seq_[static_cast<std::size_t>(peer)]) {
      return {};
    }
    return sink_->payload_room(peer, header.length);
  }
  void on_frame_placed(int peer, std::span<const std::byte> head) override {
    wire::Header header;
    std::memcpy(&header, head.data(), wire::kHeaderSize);  // checked by place_frame
    ++expected_seq_[static_cast<std::size_t>(peer)];
    ++stats_.data_received;
    stats_.bytes_received += header.length;
    ++delivered_;
    sink_->on_payload_placed(peer);
  }

  // A reliable transport never drops, so a bad frame means the stream cannot be trusted.
  void lose(int peer, std::string_view why) { sink_->on_peer_lost(peer, why); }

  std::unique_ptr<transport::Transport> transport_;
  ChannelConfig config_;
  SpinHistory spin_history_;
  wire::FrameKey frame_key_;
  std::vector<std::uint32_t> next_seq_;
  std::vector<std::uint32_t> expected_seq_;
  ChannelStats stats_;
  PayloadSink* sink_ = nullptr;
  std::size_t delivered_ = 0;
};

}  // namespace

std::unique_ptr<Channel> make_passthrough_channel(std::unique_ptr<transport::Transport> transport,
                                                  const ChannelConfig& config) {
  return std::make_unique<PassthroughChannel>(std::move(transport), config);
}

}  // namespace bsp::recovery
