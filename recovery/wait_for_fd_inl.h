// recovery/wait_for_fd_inl.h: the template part of wait_for_fd.h.
#pragma once

#include <sched.h>

namespace bsp::recovery {

template <typename ReadyCheck>
bool spin_then_block(int fd, int spin_us, std::chrono::microseconds timeout, ReadyCheck&& ready, int also_fd) {
  using clock = std::chrono::steady_clock;
  auto start = clock::now();
  auto spin = std::min<std::chrono::microseconds>(std::chrono::microseconds(spin_us), timeout);
  while (clock::now() - start < spin) {
    if (ready()) return true;
    sched_yield();  // a peer sharing this core runs now instead of after a wake-up
  }
  auto left = timeout - std::chrono::duration_cast<std::chrono::microseconds>(clock::now() - start);
  if (left.count() <= 0) return ready();
  return block_on_fd(fd, left, also_fd);
}

}  // namespace bsp::recovery
