// transport/transport.cc: the defaults of the Transport interface (transport.h).
#include "transport/transport.h"

#include <poll.h>

#include <cstring>
#include <vector>

namespace bsp::transport {

bool Transport::ready() {
  pollfd waiter{wait_fd(), POLLIN, 0};
  return ::poll(&waiter, 1, 0) > 0;
}

SendStatus Transport::send_gathered(int peer, std::span<const std::byte> head, std::span<const std::byte> body) {
  thread_local std::vector<std::byte> frame;
  frame.resize(head.size() + body.size());
  std::memcpy(frame.data(), head.data(), head.size());
  if (!body.empty()) std::memcpy(frame.data() + head.size(), body.data(), body.size());
  return send(peer, frame);
}

}  // namespace bsp::transport
