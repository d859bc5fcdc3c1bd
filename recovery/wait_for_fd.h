// recovery/wait_for_fd.h: "spin briefly, then block" on a descriptor: the waiting rule of
// every channel (docs/DESIGN.md). Spinning pays while the peer we wait for runs on another
// core (waking a blocked process costs 60-80 us here); blocking frees the core when there
// are more processes than cores or the wait is long.
#pragma once

#include <chrono>

#include "transport/transport.h"

namespace bsp::recovery {

// Returns when fd is readable (true) or timeout passed (false). ready() is polled during
// the first spin_us microseconds (yielding the core between polls); then poll(2) blocks.
// also_fd (>= 0): a second descriptor whose readiness ends the block too.
template <typename ReadyCheck>
bool spin_then_block(int fd, int spin_us, std::chrono::microseconds timeout, ReadyCheck&& ready, int also_fd = -1);

// The same over a transport: spins on its ready() (cheap where the transport can tell
// without a system call), then blocks on its wait_fd() if before_block() agrees.
bool spin_then_block(transport::Transport& transport, int spin_us, std::chrono::microseconds timeout);

// Blocks in poll(2) until fd is readable or timeout passes.
bool block_on_fd(int fd, std::chrono::microseconds timeout, int also_fd = -1);

}  // namespace bsp::recovery

#include "recovery/wait_for_fd_inl.h"
