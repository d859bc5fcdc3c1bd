// recovery/ack_policy.cc: the policy table behind ChannelConfig::ack_policy.
#include "recovery/ack_policy.h"

#include <stdexcept>
#include <string>

namespace bsp::recovery {

std::unique_ptr<AckPolicy> make_ack_policy(std::string_view name) {
  if (name.empty() || name == "buffer") return make_buffer_ack_policy();
  if (name == "every") return make_every_ack_policy();
  if (name == "pupa") return make_pupa_ack_policy();
  throw std::runtime_error("unknown ack policy '" + std::string(name) + "' (known: buffer, every, pupa)");
}

}  // namespace bsp::recovery
