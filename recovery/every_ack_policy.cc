// recovery/every_ack_policy.cc: the naive baseline: every data frame is acknowledged by
// its own explicit ack frame, and no frame needs to ask for one.
#include "recovery/ack_policy.h"

namespace bsp::recovery {
namespace {

class EveryAckPolicy final : public AckPolicy {
 public:
  std::string_view name() const override { return "every"; }
  bool request_ack(const PolicyContext&, SendLink&) override { return false; }
  AckDecision on_data(const PolicyContext&, const ReceiveLink&) override { return AckDecision::this_frame; }
  bool acks_every_frame() const override { return true; }
};

}  // namespace

std::unique_ptr<AckPolicy> make_every_ack_policy() { return std::make_unique<EveryAckPolicy>(); }

}  // namespace bsp::recovery
