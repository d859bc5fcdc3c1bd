// bsplib/dissemination_barrier.h: the barrier of the sparse superstep protocol
// (engine_sparse.cc), and the agreement on collective calls it carries.
//
// Dissemination barrier of radix k (Hensgen, Finkel and Manber 1988, generalised as in
// Hoefler et al.'s n-way dissemination; k = 2 is the barrier of NBX [NBX10]): ⌈log_k p⌉
// rounds; in round r process i sends one message to each (i + j·k^r) mod p and waits for
// one from each (i − j·k^r) mod p, for j = 1 … k − 1 with j·k^r < p, before it sends
// round r + 1. After round r, i has heard (through chains of messages) from every i − m
// with m < k^(r+1); after the last, from every process that entered. A larger radix
// trades messages ((k − 1) per round) for rounds: on an oversubscribed machine each round
// is a wait, usually a context switch, so fewer rounds cost less (docs/DESIGN.md §3).
//
// Each message also carries what its sender knows of the superstep's collective calls
// (bsp_sync or bsp_end, the next tag size, how many registrations were pushed and
// popped): its own, which every process it has heard from shares unless it has seen two
// that differ, in which case it carries those two as witnesses. So when the barrier
// completes, every process knows whether all p made the same calls, and if not, two pids
// that differ. When registrations were pushed or popped, each message carries too the
// changes of every process its sender knows of (its own and those heard of): after the
// last round every process has all p (an all-gather in the same ⌈log₂ p⌉ messages).
//
// Message body (little-endian; the record around it: superstep_records.h `barrier`):
//   u32 superstep | u8 round | calls | u8 conflict | i32 pid a | calls a | i32 pid b |
//   calls b | u32 changes | changes × (i32 pid | u32 pushes | pushes × u64 size |
//   u32 pops | pops × (u32 registration, u8 ambiguous))
//   calls = u8 final (bit 0: in bsp_end, bit 1: bsp_set_tagsize called) | u32 next tag size |
//           u32 pushes | u32 pops
// Every field read from a message is checked (superstep, round against its sender, pids,
// counts against the bytes there) before it is used.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "bsplib/superstep_records.h"

namespace bsp {

// What a process's bsp_sync or bsp_end says of its collective calls.
struct CollectiveCalls {
  std::uint8_t final = 0;  // 1: in bsp_end
  std::uint32_t next_tagsize = 0;
  std::uint32_t pushes = 0, pops = 0;
  bool tagsize_set = false;  // bsp_set_tagsize called in the superstep (bit 1 of final's byte)
  bool operator==(const CollectiveCalls&) const = default;
};

// One process's registration changes of the superstep.
struct RegistrationChanges {
  int pid = 0;
  std::vector<std::uint64_t> pushes;
  std::vector<records::Pop> pops;
};

// Two processes whose calls differ.
struct CallConflict {
  int pid_a = 0;
  CollectiveCalls a;
  int pid_b = 0;
  CollectiveCalls b;
};

// What stops the job when two processes made different collective calls in superstep.
std::string describe_conflict(long superstep, const CallConflict& conflict);

class DisseminationBarrier {
 public:
  // radix: 2 or more (k above).
  DisseminationBarrier(int pid, int nprocs, int radix = 2);

  int rounds() const { return rounds_; }
  int radix() const { return radix_; }
  // How many messages round r sends (and receives): the j with j·k^r < p.
  int fan(int round) const { return fan_[static_cast<std::size_t>(round)]; }
  // The j-th partner (1 … fan) of a round: whom this process sends to, hears from.
  int to(int round, int j = 1) const { return static_cast<int>((pid_ + j * stride(round)) % nprocs_); }
  int from(int round, int j = 1) const {
    return static_cast<int>(((pid_ - j * stride(round)) % nprocs_ + nprocs_) % nprocs_);
  }

  // Whether this process sends pid a message in some round (a partner "ahead"), and
  // whether it hears from src in some round (a partner "behind"); a is ahead of b exactly
  // when b is behind a. The sparse protocol needs no ack for records to a partner ahead:
  // they precede the barrier message on the same in-order link (engine_sparse.cc).
  bool sends_to(int pid) const;
  bool hears_from(int src) const;

  // A new superstep: this process's calls, and its changes (used when it has any).
  void start(std::uint32_t superstep, const CollectiveCalls& mine, RegistrationChanges changes);
  // The superstep a message body is for (nullopt: too short to say).
  static std::optional<std::uint32_t> superstep_of(std::span<const std::byte> body);
  // Takes the body of a barrier message of this superstep from src. Returns what is
  // wrong with it ("" when nothing is): damaged, a round src does not send to this
  // process, a second message for a round.
  std::string receive(int src, std::span<const std::byte> body);

  // A message to send: to whom, and its body.
  struct Message {
    int to;
    std::vector<std::byte> body;
  };
  // This process enters (its own data is acknowledged): round 0's message.
  void enter(std::vector<Message>& out);
  // Consumes the rounds whose messages are here, in order; each lets the next round's
  // message go (appended to out).
  void advance(std::vector<Message>& out);
  bool entered() const { return entered_; }
  bool complete() const { return entered_ && consumed_ == rounds_; }
  // A process whose message the barrier waits for now (-1: none).
  int awaited() const;

  // Once complete: two processes whose calls differ, if any.
  const std::optional<CallConflict>& conflict() const { return conflict_; }
  // Once complete, when registrations changed: every process's changes, by pid.
  std::vector<RegistrationChanges> take_changes();

 private:
  struct Received {
    CollectiveCalls calls;
    std::optional<CallConflict> conflict;
    std::vector<RegistrationChanges> changes;
  };
  long stride(int round) const { return stride_[static_cast<std::size_t>(round)]; }
  // Where round's message from src is kept in arrived_ (-1: src does not send in round).
  long slot(int round, int src) const;
  // The round in which a partner at this distance ahead (pid + distance) is messaged, -1: none.
  int round_at(long distance) const;
  std::optional<Received>& arrival(int round, int j);  // round's message from from(round, j)
  const std::optional<Received>& arrival(int round, int j) const;
  bool round_here(int round) const;
  void send_round(int round, std::vector<Message>& out) const;
  std::vector<std::byte> encode(int round) const;
  void merge(int src, Received&& message);
  void learn(RegistrationChanges&& changes);

  const int pid_;
  const int nprocs_;
  const int radix_;
  int rounds_ = 0;
  std::vector<long> stride_;  // by round: k^r
  std::vector<int> fan_;      // by round
  std::uint32_t superstep_ = 0;
  CollectiveCalls mine_;
  bool with_changes_ = false;
  bool entered_ = false;
  int consumed_ = 0;                              // rounds whose message has been taken in
  std::vector<std::optional<Received>> arrived_;  // by round × (k − 1) + j − 1
  std::optional<CallConflict> conflict_;
  std::vector<RegistrationChanges> known_;  // changes heard of (own first)
  std::vector<bool> known_pid_;
};

}  // namespace bsp
