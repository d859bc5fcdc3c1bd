// recovery/wait_for_fd.cc: blocking wait on a descriptor with a timeout.
#include "recovery/wait_for_fd.h"

#include <poll.h>
#include <sched.h>

#include <algorithm>

namespace bsp::recovery {

bool block_on_fd(int fd, std::chrono::microseconds timeout) {
  pollfd waiter{fd, POLLIN, 0};
  int ms = static_cast<int>((timeout.count() + 999) / 1000);
  return ::poll(&waiter, 1, ms) > 0;
}

bool spin_then_block(transport::Transport& transport, int spin_us, std::chrono::microseconds timeout) {
  using clock = std::chrono::steady_clock;
  auto start = clock::now();
  auto spin = std::min<std::chrono::microseconds>(std::chrono::microseconds(spin_us), timeout);
  while (clock::now() - start < spin) {
    if (transport.ready()) return true;
    sched_yield();  // a peer sharing this core runs now instead of after a wake-up
  }
  auto left = timeout - std::chrono::duration_cast<std::chrono::microseconds>(clock::now() - start);
  if (left.count() <= 0 || !transport.before_block()) return transport.ready();
  bool woken = block_on_fd(transport.wait_fd(), left);
  transport.after_block();
  return woken;
}

}  // namespace bsp::recovery
