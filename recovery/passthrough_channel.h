// recovery/passthrough_channel.h: the channel over a reliable transport (tcp): no
// sequence-based recovery (the kernel does it), only the wire header, stamped on the way
// out and checked on the way in so foreign or corrupt frames are counted, never trusted.
#pragma once

#include <memory>

#include "recovery/channel.h"

namespace bsp::recovery {

std::unique_ptr<Channel> make_passthrough_channel(std::unique_ptr<transport::Transport> transport,
                                                  const ChannelConfig& config);

}  // namespace bsp::recovery
