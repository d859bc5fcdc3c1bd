// recovery/make_channel.cc: picks the channel for a transport: pass-through over a
// reliable one, the recovery protocol over an unreliable one.
#include "recovery/channel.h"
#include "recovery/passthrough_channel.h"
#include "recovery/reliable_channel.h"

namespace bsp::recovery {

std::unique_ptr<Channel> make_channel(std::unique_ptr<transport::Transport> transport,
                                      const ChannelConfig& config) {
  if (transport->capabilities().reliable) return make_passthrough_channel(std::move(transport), config);
  return make_reliable_channel(std::move(transport), config);
}

}  // namespace bsp::recovery
