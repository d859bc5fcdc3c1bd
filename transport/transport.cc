// transport/transport.cc: the defaults of the Transport interface (transport.h).
#include "transport/transport.h"

#include <poll.h>

namespace bsp::transport {

bool Transport::ready() {
  pollfd waiter{wait_fd(), POLLIN, 0};
  return ::poll(&waiter, 1, 0) > 0;
}

}  // namespace bsp::transport
