// recovery/buffer_ack_policy.cc: paper 001's acknowledgement policy, based on buffer
// resources rather than timeouts. Sender: flag a frame ack-requested when, at the current
// rate of buffer consumption (sends and out-of-order arrivals), the free buffers would run
// out within one round trip (for the link's window: and at least half of it is taken).
// Receiver: an explicit ack only when it was asked for AND at least n/(2p) frames came in
// on that link since the last ack (piggy-backed or explicit).
#include <algorithm>

#include "recovery/ack_policy.h"
#include "recovery/protocol_constants.h"

namespace bsp::recovery {
namespace {

class BufferAckPolicy final : public AckPolicy {
 public:
  std::string_view name() const override { return "buffer"; }

  bool request_ack(const PolicyContext& context, SendLink&) override {
    update_rate(context);
    double per_round_trip = rate_per_ns_ * static_cast<double>(context.srtt.count());
    std::uint64_t since_window = context.pool.acquisitions() - window_acquisitions_;
    double needed = std::max(per_round_trip, static_cast<double>(since_window)) +
                    static_cast<double>(tuning::kBufferPolicyMargin);
    if (static_cast<double>(context.sendable) <= needed) return true;  // the pool runs low
    // The link's window runs low. A small window (2 frames per link at p = 256) is asked
    // to be acknowledged only once at least half of it is taken: with the margin alone
    // every frame asked for an ack of its own; the receiver acknowledges the
    // rest when the link goes quiet (ProtocolCore's idle ack).
    return static_cast<double>(context.link_sendable) <= needed &&
           (context.link_window == SIZE_MAX || 2 * context.link_sendable < context.link_window);
  }

  AckDecision on_data(const PolicyContext& context, const ReceiveLink& link) override {
    std::size_t threshold = std::max<std::size_t>(
        1, context.pool.capacity() / (2 * static_cast<std::size_t>(std::max(1, context.nprocs))));
    return link.peer_asked && link.since_ack >= threshold ? AckDecision::end_of_round : AckDecision::none;
  }

 private:
  // Buffers consumed per nanosecond, smoothed over windows of at least one round trip.
  void update_rate(const PolicyContext& context) {
    if (!started_) {
      started_ = true;
      window_start_ = context.now;
      window_acquisitions_ = context.pool.acquisitions();
      return;
    }
    Duration elapsed = context.now - window_start_;
    if (elapsed < std::max<Duration>(tuning::kRateWindow, context.srtt)) return;
    double rate = static_cast<double>(context.pool.acquisitions() - window_acquisitions_) /
                  static_cast<double>(elapsed.count());
    rate_per_ns_ = (rate_per_ns_ + rate) / 2;
    window_start_ = context.now;
    window_acquisitions_ = context.pool.acquisitions();
  }

  bool started_ = false;
  Time window_start_{};
  std::uint64_t window_acquisitions_ = 0;
  double rate_per_ns_ = 0;
};

}  // namespace

std::unique_ptr<AckPolicy> make_buffer_ack_policy() { return std::make_unique<BufferAckPolicy>(); }

}  // namespace bsp::recovery
