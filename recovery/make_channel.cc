// recovery/make_channel.cc: picks the channel for a transport: pass-through over a
// reliable one, the recovery protocol over an unreliable one.
#include <stdexcept>
#include <string>

#include "recovery/channel.h"
#include "recovery/passthrough_channel.h"

namespace bsp::recovery {

std::unique_ptr<Channel> make_channel(std::unique_ptr<transport::Transport> transport,
                                      const ChannelConfig& config) {
  if (transport->capabilities().reliable) return make_passthrough_channel(std::move(transport), config);
  throw std::runtime_error("transport '" + std::string(transport->name()) +
                           "' is unreliable and the recovery layer is not built in yet");
}

}  // namespace bsp::recovery
