// recovery/wait_for_fd.cc: blocking wait on a descriptor with a timeout.
#include "recovery/wait_for_fd.h"

#include <poll.h>

namespace bsp::recovery {

bool block_on_fd(int fd, std::chrono::microseconds timeout) {
  pollfd waiter{fd, POLLIN, 0};
  int ms = static_cast<int>((timeout.count() + 999) / 1000);
  return ::poll(&waiter, 1, ms) > 0;
}

}  // namespace bsp::recovery
