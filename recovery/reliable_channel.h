// recovery/reliable_channel.h: the channel over an unreliable datagram transport (udp,
// nic, or anything wrapped in fault): recovery/protocol_core.h driven by the steady clock,
// its frames handed to the transport in batches, its timers served by Channel::wait.
#pragma once

#include <memory>

#include "recovery/channel.h"

namespace bsp::recovery {

// Throws std::runtime_error for a bad configuration (unknown ack policy, MTU too small).
std::unique_ptr<Channel> make_reliable_channel(std::unique_ptr<transport::Transport> transport,
                                               const ChannelConfig& config);

}  // namespace bsp::recovery
