// tests/transport/packet_socket_access.h: whether this test may open packet sockets
// (CAP_NET_RAW: root, outside Bazel's sandbox); the live nic tests skip when not.
#pragma once

#include <unistd.h>

#include <stdexcept>

#include "transport/nic/packet_socket.h"

namespace bsp::transport::nic {

inline bool may_open_packet_sockets() {
  try {
    ::close(open_packet_socket());
    return true;
  } catch (const std::runtime_error&) {
    return false;
  }
}

}  // namespace bsp::transport::nic
