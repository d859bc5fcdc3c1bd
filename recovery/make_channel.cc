// recovery/make_channel.cc: picks the channel for a transport: pass-through over a
// reliable one, the recovery protocol over an unreliable one, one of each per path over
// a hybrid whose peers are both on this host and elsewhere.
#include "recovery/channel.h"
#include "recovery/hybrid_channel.h"
#include "recovery/passthrough_channel.h"
#include "recovery/reliable_channel.h"

namespace bsp::recovery {

std::unique_ptr<Channel> make_channel(std::unique_ptr<transport::Transport> transport, const ChannelConfig& config) {
  if (transport::PathSplit* paths = transport->path_split()) {
    if (paths->has_local_peers() && paths->has_network_peers())
      return make_hybrid_channel(std::move(transport), config);
    // One path only: every peer on this host (or alone), or none.
    return make_channel(paths->has_network_peers() ? paths->release_network() : paths->release_local(), config);
  }
  if (transport->capabilities().reliable) return make_passthrough_channel(std::move(transport), config);
  return make_reliable_channel(std::move(transport), config);
}

}  // namespace bsp::recovery
