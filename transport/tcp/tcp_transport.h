// transport/tcp/tcp_transport.h: the `tcp` transport, paper 001's BSPlib/TCP: a full mesh
// of TCP_NODELAY stream connections, recovery done by TCP in the kernel. Frames are
// length-prefixed on each stream; a frame the kernel cannot take whole is queued per peer
// (bounded) and pushed by flush(). Readiness comes from one epoll descriptor.
#pragma once

#include <memory>

#include "transport/transport.h"

namespace bsp::transport {

// Options: "host" (address to listen on, default 127.0.0.1), "sndbuf"/"rcvbuf" (bytes).
std::unique_ptr<Transport> make_tcp_transport(const TransportConfig& config);

}  // namespace bsp::transport
