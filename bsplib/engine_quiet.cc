// bsplib/engine_quiet.cc: the quiet superstep: one in which this process wrote nothing
// and has received nothing, over superstep lines to every peer. Its lines go out empty
// and it waits, a bounded number of looks, for every peer's empty line; then the
// superstep is over without the general driver's passes (engine.cc). Anything else (a
// line with records, a peer that sends frames, one slow to come, a lost link) leaves it
// to the general driver, to which it has changed nothing but lines that driver posts
// again (the same empty line: a peer reading it twice reads the same).
#include <algorithm>

#include "bsplib/engine.h"
#include "recovery/wait_for_fd.h"

namespace bsp {

void Engine::QuietBackoff::gave_up() {
  if (++outlasted < 2) return;
  outlasted = 0;
  skip = next_skip;
  next_skip = std::min(2 * next_skip, kMaxSkip);
}

void Engine::QuietBackoff::came() {
  outlasted = 0;
  next_skip = kFirstSkip;
}

bool Engine::quiet_superstep() {
  if (sparse_ || !superstep_lines_ || !lines_to_all_ || !writing_.empty() || !receiving_.empty() || !hpputs_.empty() ||
      tagsize_set_ || registrations_.changes_pending() || !deferred_.empty() || quiet_polls_ == 0) {
    return false;
  }
  if (quiet_.skip > 0) {
    --quiet_.skip;
    return false;
  }
  const std::uint64_t started = sync_clock_.now();
  const auto superstep = static_cast<std::uint64_t>(superstep_);
  for (int peer = 0; peer < nprocs_; ++peer) {
    if (peer == pid_) continue;
    if (!line_paths_[static_cast<std::size_t>(peer)]->post_superstep_line(peer, superstep, {})) return false;
  }
  std::byte records[transport::Staging::kSuperstepLineBytes];
  int polls = 0;
  for (int peer = 0; peer < nprocs_; ++peer) {
    if (peer == pid_) continue;
    transport::Staging* path = line_paths_[static_cast<std::size_t>(peer)];
    for (;;) {
      const long size = path->take_superstep_line(peer, superstep, records);
      if (size == 0) break;
      if (size > 0) return false;  // records: the general driver takes them
      if (++polls > quiet_polls_) {
        quiet_.gave_up();
        return false;
      }
      recovery::cpu_relax();
    }
    moved(peer);
  }
  quiet_.came();
  ++quiet_supersteps_;
  messages_.deliver_arrived();
  for (MessageQueue& queue : queues_) queue.deliver_arrived();
  watchdog_.superstep_ended(superstep_);
  ++superstep_;
  channel_->next_superstep();
  staged_yet_ = false;
  const std::uint64_t ended = sync_clock_.now();
  if (ended > started) communication_ticks_ += ended - started;
  return true;
}

}  // namespace bsp
