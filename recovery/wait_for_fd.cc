// recovery/wait_for_fd.cc: blocking wait on a descriptor with a timeout.
#include "recovery/wait_for_fd.h"

#include <poll.h>
#include <sched.h>

#include <algorithm>

namespace bsp::recovery {
namespace {

constexpr std::chrono::microseconds kPollWithoutYielding{5};

}  // namespace

bool block_on_fd(int fd, std::chrono::microseconds timeout, int also_fd) {
  pollfd waiters[2] = {{fd, POLLIN, 0}, {also_fd, POLLIN, 0}};
  int ms = static_cast<int>((timeout.count() + 999) / 1000);
  return ::poll(waiters, also_fd >= 0 ? 2 : 1, ms) > 0;
}

namespace {

void skip_for_a_while(int& skip, int& next_skip) {
  skip = next_skip;
  next_skip = std::min(next_skip * 2, SpinHistory::kMaxSkip);
}

}  // namespace

bool spin_goes_on(std::chrono::microseconds& spin, const SpinExtension& extension, std::chrono::microseconds timeout) {
  const std::chrono::microseconds until = std::min<std::chrono::microseconds>(
      std::chrono::microseconds(extension.until_us), timeout);
  if (spin.count() == 0 || spin >= until || !spin_may_go_on(extension)) return false;
  spin = std::min(spin + std::chrono::microseconds(kIdleMachineCheckUs), until);
  return true;
}

bool spin_then_block(transport::Transport& transport, int spin_us, std::chrono::microseconds timeout,
                     SpinHistory* history, const SpinExtension& extension) {
  using clock = std::chrono::steady_clock;
  SpinHistory ignored;
  SpinHistory& past = history != nullptr ? *history : ignored;
  auto start = clock::now();
  auto spin = std::min<std::chrono::microseconds>(std::chrono::microseconds(spin_us), timeout);
  const bool unyielded = transport.capabilities().poll_without_yielding;
  const bool skipping = spin.count() > 0 && past.skip_spin > 0;
  if (skipping) {
    --past.skip_spin;
    spin = std::chrono::microseconds(0);
  }
  // First a few polls without giving the core away: a peer on another core answers
  // within a cache-line transfer (0.1-0.2 us), far sooner than a sched_yield returns.
  bool polled_unyielded = false;
  if (unyielded && !skipping) {
    if (past.skip_unyielded > 0) {
      --past.skip_unyielded;
    } else {
      polled_unyielded = true;
      const auto until = start + std::min<std::chrono::microseconds>(kPollWithoutYielding, spin);
      do {
        for (int poll = 0; poll < 8; ++poll) {
          if (transport.ready()) {
            past.served_by_yield = 0;
            past.next_skip_unyielded = SpinHistory::kFirstSkip;
            past.outlasted = 0;
            past.next_skip_spin = SpinHistory::kFirstSkip;
            return true;
          }
          cpu_relax();
        }
      } while (clock::now() < until);
    }
  }
  for (int yields = 0;; ++yields) {
    if (clock::now() - start >= spin && !spin_goes_on(spin, extension, timeout)) break;
    if (transport.ready()) {
      if (polled_unyielded) {
        // Answered by the first yields: the unyielded polls kept the answer's writer off this core.
        if (yields > 2) {
          past.served_by_yield = 0;
        } else if (++past.served_by_yield >= 2) {
          past.served_by_yield = 0;
          skip_for_a_while(past.skip_unyielded, past.next_skip_unyielded);
        }
      }
      past.outlasted = 0;
      past.next_skip_spin = SpinHistory::kFirstSkip;
      return true;
    }
    sched_yield();  // a peer sharing this core runs now instead of after a wake-up
  }
  if (spin.count() > 0 && ++past.outlasted >= 2) {
    past.outlasted = 0;
    skip_for_a_while(past.skip_spin, past.next_skip_spin);
  }
  auto left = timeout - std::chrono::duration_cast<std::chrono::microseconds>(clock::now() - start);
  if (left.count() <= 0 || !transport.before_block()) return transport.ready();
  bool woken = block_on_fd(transport.wait_fd(), left);
  transport.after_block();
  return woken;
}

}  // namespace bsp::recovery
