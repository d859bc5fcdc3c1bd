// recovery/wait_for_fd.h: "spin briefly, then block" on a descriptor: the waiting rule of
// every channel (docs/DESIGN.md). Spinning pays while the peer we wait for runs on another
// core (waking a blocked process costs 60-80 us here); blocking frees the core when there
// are more processes than cores or the wait is long.
#pragma once

#include <chrono>

#include "recovery/spin_policy.h"
#include "transport/transport.h"

namespace bsp::recovery {

// One pause in a poll loop: the core's hint that this thread spins on memory another
// writes (it yields issue slots to a sibling thread and leaves the loop sooner).
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Returns when fd is readable (true) or timeout passed (false). ready() is polled during
// the first spin_us microseconds (yielding the core between polls); then poll(2) blocks.
// also_fd (>= 0): a second descriptor whose readiness ends the block too.
template <typename ReadyCheck>
bool spin_then_block(int fd, int spin_us, std::chrono::microseconds timeout, ReadyCheck&& ready, int also_fd = -1);

// What one channel's past waits say of spinning. Two rules, each switching a phase off
// for a while (skip: doubling from kFirstSkip up to kMaxSkip waits) and trying it again:
// - Polling without yielding pays while the peer waited for runs on another core; when
//   the answer keeps coming right after the first sched_yield, the peer needed this core
//   (the scheduler put both on one, or the machine is loaded), and each unyielded poll
//   only delayed it.
// - Spinning pays while answers come within it; when waits keep outlasting it (peers
//   computing), each yield hands the core to whatever runs next, the job's busy processes
//   compete with spinners (more processes than cores, or a loaded machine), and blocking
//   at once is faster (measured: docs/figures.md, "Waiting on shared cores"). A skipped
//   spin costs a wait the wake-up (5 us here) instead of a poll.
struct SpinHistory {
  static constexpr int kFirstSkip = 16, kMaxSkip = 4096;
  int skip_unyielded = 0;  // waits left that go straight to yielding
  int next_skip_unyielded = kFirstSkip;
  int served_by_yield = 0;  // consecutive waits whose unyielded polls ran out, then answered at once
  int skip_spin = 0;        // waits left that block at once (no spin at all)
  int next_skip_spin = kFirstSkip;
  int outlasted = 0;  // consecutive waits that outlasted the spin
};

// The same over a transport: spins on its ready() (cheap where the transport can tell
// without a system call), then blocks on its wait_fd() if before_block() agrees. history
// (may be null: nothing learned) is the channel's, read and updated by every wait. A wait
// whose spin ran out goes on while spin_goes_on says so.
bool spin_then_block(transport::Transport& transport, int spin_us, std::chrono::microseconds timeout,
                     SpinHistory* history = nullptr, const SpinExtension& extension = {});

// At the end of a wait's spin (spin: how long it has been): whether it goes on, and then
// spin grows by kIdleMachineCheckUs, to extension.until_us (within timeout) at most.
bool spin_goes_on(std::chrono::microseconds& spin, const SpinExtension& extension, std::chrono::microseconds timeout);

// Blocks in poll(2) until fd is readable or timeout passes.
bool block_on_fd(int fd, std::chrono::microseconds timeout, int also_fd = -1);

}  // namespace bsp::recovery

#include "recovery/wait_for_fd_inl.h"
