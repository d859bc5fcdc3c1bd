// recovery/wait_for_fd.cc: blocking wait on a descriptor with a timeout.
#include "recovery/wait_for_fd.h"

#include <poll.h>
#include <sched.h>

#include <algorithm>

namespace bsp::recovery {
namespace {

constexpr std::chrono::microseconds kPollWithoutYielding{5};

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace

bool block_on_fd(int fd, std::chrono::microseconds timeout, int also_fd) {
  pollfd waiters[2] = {{fd, POLLIN, 0}, {also_fd, POLLIN, 0}};
  int ms = static_cast<int>((timeout.count() + 999) / 1000);
  return ::poll(waiters, also_fd >= 0 ? 2 : 1, ms) > 0;
}

bool spin_then_block(transport::Transport& transport, int spin_us, std::chrono::microseconds timeout) {
  using clock = std::chrono::steady_clock;
  auto start = clock::now();
  auto spin = std::min<std::chrono::microseconds>(std::chrono::microseconds(spin_us), timeout);
  // First a few polls without giving the core away: a peer on another core answers
  // within a cache-line transfer (0.1-0.2 us), far sooner than a sched_yield returns.
  if (transport.capabilities().poll_without_yielding) {
    const auto until = start + std::min<std::chrono::microseconds>(kPollWithoutYielding, spin);
    do {
      for (int poll = 0; poll < 8; ++poll) {
        if (transport.ready()) return true;
        cpu_relax();
      }
    } while (clock::now() < until);
  }
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
