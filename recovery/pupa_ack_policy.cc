// recovery/pupa_ack_policy.cc: paper 000's (Pupa) sender-controlled acknowledgements.
// Each link owns a share of the pool (its "primary send buffer"): when the link's free
// share falls below the low water mark, or the whole pool below it, the sender enters the
// ack-required state and flags every frame until an ack lifts the free share above the
// high water mark. The receiver acks immediately when asked. Flow control is optimistic:
// credit is unlimited until the receiver overflows, then zero until buffers free again
// (recovery/protocol_core.cc advertises and honours the header's credit field).
#include <algorithm>

#include "recovery/ack_policy.h"
#include "recovery/protocol_constants.h"

namespace bsp::recovery {
namespace {

class PupaAckPolicy final : public AckPolicy {
 public:
  std::string_view name() const override { return "pupa"; }

  bool request_ack(const PolicyContext& context, SendLink& link) override {
    std::size_t share = link_share(context);
    std::size_t used = std::min(share, link.in_flight() + 1);
    bool link_low = (share - used) * 100 < share * tuning::kPupaLowWaterPercent;
    bool pool_low = context.sendable * 100 < context.send_capacity * tuning::kPupaLowWaterPercent;
    if (link_low || pool_low) link.ack_required = true;
    return link.ack_required;
  }

  void on_acked(const PolicyContext& context, SendLink& link) override {
    std::size_t share = link_share(context);
    std::size_t used = std::min(share, link.in_flight());
    if ((share - used) * 100 > share * tuning::kPupaHighWaterPercent) link.ack_required = false;
  }

  AckDecision on_data(const PolicyContext&, const ReceiveLink& link) override {
    return link.peer_asked ? AckDecision::end_of_round : AckDecision::none;
  }

  bool flow_control() const override { return true; }

 private:
  static std::size_t link_share(const PolicyContext& context) {
    std::size_t peers = static_cast<std::size_t>(std::max(1, context.nprocs - 1));
    return std::max<std::size_t>(2, std::min(context.link_window, context.send_capacity / peers));
  }
};

}  // namespace

std::unique_ptr<AckPolicy> make_pupa_ack_policy() { return std::make_unique<PupaAckPolicy>(); }

}  // namespace bsp::recovery
