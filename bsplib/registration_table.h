// bsplib/registration_table.h: the DRMA registrations of one process. Registration is
// collective and matched by order: the k-th bsp_push_reg on every process names the same
// logical area, so a put names "registration k" and each process maps k to its own
// address and size. Pushes and pops take effect at the next bsp_sync; lookups during a
// superstep see the table as it was when the superstep began.
//
// Pops are matched by order too: the k-th bsp_pop_reg of a superstep removes the same
// registration everywhere. A process names it by address: a real address its most recent
// live registration (the Oxford rule; a process on which that is another registration
// than elsewhere stops the job), NULL ambiguously when several are live (NULL pushed with
// size 0 more than once, as a process with no local data does): it removes the most
// recent one unless another process, for which the k-th pop is unambiguous, says which
// one it is (resolve_pops).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "bsplib/superstep_records.h"

namespace bsp {

struct Registration {
  const void* address = nullptr;
  std::size_t size = 0;
  bool active = false;
};

class RegistrationTable {
 public:
  // Records a push (effective at the next sync).
  void push(const void* address, std::size_t size);
  // Records a pop of a registration of address (effective at the next sync). False when
  // address has no live registration left to pop.
  bool pop(const void* address);

  // The registration index of address in effect now (the most recent one), if any. The
  // last address found is remembered (a loop of puts names one area again and again).
  std::optional<std::uint32_t> find(const void* address) const {
    if (address == last_found_address_ && last_found_valid_) return last_found_index_;
    return find_slow(address);
  }
  // The registration with index, or nullptr when there is no active one.
  const Registration* get(std::uint32_t index) const {
    if (index >= entries_.size() || !entries_[index].active) return nullptr;
    return &entries_[index];
  }

  // The sizes pushed this superstep, in call order.
  std::vector<std::uint64_t> pushes_this_superstep() const;
  // Whether this superstep pushed or popped anything.
  bool changes_pending() const { return !pushed_.empty() || !pops_.empty(); }
  // This superstep's pops as this process resolved them alone, in call order.
  std::vector<records::Pop> pops_this_superstep() const;

  // Agrees on what every pop of this superstep removes, given every process's pops
  // (index = pid, each the same length). Returns "" when this process's pops fit the
  // agreed choice, else what differs (for the error message).
  std::string resolve_pops(std::span<const std::vector<records::Pop>> pops_by_pid);

  // Applies this superstep's pushes and pops (called at the end of bsp_sync), with the
  // sizes every process pushed (index = pid; empty when nobody pushed), so that puts and
  // gets can be checked against the remote registration when they are called.
  void commit(std::span<const std::vector<std::uint64_t>> pushes_by_pid);

  // The size of registration index on process pid (as that process registered it), or
  // nullopt when the registration is not active.
  std::optional<std::uint64_t> remote_size(int pid, std::uint32_t index) const {
    if (!get(index) || pid < 0 || static_cast<std::size_t>(pid) >= remote_sizes_.size() ||
        index >= remote_sizes_[static_cast<std::size_t>(pid)].size()) {
      return std::nullopt;
    }
    return remote_sizes_[static_cast<std::size_t>(pid)][index];
  }

 private:
  // Live registrations of address (committed and pushed this superstep) that the first
  // `pops_before` pops of this superstep have not taken, oldest first.
  std::vector<std::uint32_t> candidates(const void* address, std::size_t pops_before) const;

  std::vector<Registration> entries_;                                       // index = registration number, never reused
  std::unordered_map<const void*, std::vector<std::uint32_t>> by_address_;  // active, oldest first
  std::vector<Registration> pushed_;  // entries pushed this superstep (not yet in entries_)
  struct PendingPop {
    const void* address;
    std::uint32_t index;  // what it removes (resolve_pops may change it)
    bool ambiguous;
  };
  std::vector<PendingPop> pops_;
  std::vector<std::vector<std::uint64_t>> remote_sizes_;  // [pid][index]

  std::optional<std::uint32_t> find_slow(const void* address) const;
  // find()'s memory of its last answer; forgotten when the table changes (commit).
  mutable const void* last_found_address_ = nullptr;
  mutable std::uint32_t last_found_index_ = 0;
  mutable bool last_found_valid_ = false;
};

}  // namespace bsp
