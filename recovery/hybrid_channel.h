// recovery/hybrid_channel.h: one channel over a hybrid transport's two paths
// (transport/hybrid_transport.h): a pass-through over shm for this host's peers and the
// channel the network transport needs for the others (pass-through over tcp, the
// recovery protocol over udp or nic). Payloads are routed by peer; progress runs both;
// waiting spins on both and then blocks on both (the network channel's wait, which also
// keeps its timers, ends when shm's wake-up pipe is written too).
#pragma once

#include <memory>

#include "recovery/channel.h"
#include "transport/transport.h"

namespace bsp::recovery {

// transport->path_split() must not be nullptr.
std::unique_ptr<Channel> make_hybrid_channel(std::unique_ptr<transport::Transport> transport,
                                             const ChannelConfig& config);

}  // namespace bsp::recovery
