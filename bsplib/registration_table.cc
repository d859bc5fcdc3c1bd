// bsplib/registration_table.cc: registrations, their deferred changes, and the matching
// of pops across processes.
#include "bsplib/registration_table.h"

#include <fmt/format.h>

#include <algorithm>

namespace bsp {

void RegistrationTable::push(const void* address, std::size_t size) {
  pushed_.push_back(Registration{address, size, true});
}

std::vector<std::uint32_t> RegistrationTable::candidates(const void* address, std::size_t pops_before) const {
  std::vector<std::uint32_t> live;
  if (auto found = by_address_.find(address); found != by_address_.end()) live = found->second;
  for (std::size_t i = 0; i < pushed_.size(); ++i) {
    if (pushed_[i].address == address) live.push_back(static_cast<std::uint32_t>(entries_.size() + i));
  }
  for (std::size_t k = 0; k < pops_before && k < pops_.size(); ++k) {
    live.erase(std::remove(live.begin(), live.end(), pops_[k].index), live.end());
  }
  return live;
}

bool RegistrationTable::pop(const void* address) {
  std::vector<std::uint32_t> live = candidates(address, pops_.size());
  if (live.empty()) return false;
  // A real address names its most recent registration (the Oxford rule): a process on
  // which it names another registration than elsewhere is an error resolve_pops reports.
  // NULL is the one address that stands for "nothing here" in several registrations at
  // once, so a pop of NULL with several live is ambiguous; so is one after an earlier
  // ambiguous pop of NULL (which registration that one removes is only a guess until
  // resolve_pops, so this one's choice is too).
  bool ambiguous = address == nullptr &&
                   (live.size() > 1 || std::any_of(pops_.begin(), pops_.end(), [&](const PendingPop& earlier) {
                      return earlier.address == address && earlier.ambiguous;
                    }));
  pops_.push_back(PendingPop{address, live.back(), ambiguous});
  return true;
}

std::vector<std::uint64_t> RegistrationTable::pushes_this_superstep() const {
  std::vector<std::uint64_t> sizes;
  for (const Registration& pushed : pushed_) sizes.push_back(pushed.size);
  return sizes;
}

std::vector<records::Pop> RegistrationTable::pops_this_superstep() const {
  std::vector<records::Pop> pops;
  for (const PendingPop& pop : pops_) pops.push_back(records::Pop{pop.index, pop.ambiguous});
  return pops;
}

std::string RegistrationTable::resolve_pops(std::span<const std::vector<records::Pop>> pops_by_pid) {
  for (std::size_t k = 0; k < pops_.size(); ++k) {
    // The agreed choice: the first process's for which pop k is unambiguous (all such
    // must agree), else pid 0's.
    int decided_by = -1;
    std::uint32_t agreed = pops_by_pid.empty() ? pops_[k].index : pops_by_pid[0][k].registration;
    for (std::size_t pid = 0; pid < pops_by_pid.size(); ++pid) {
      const records::Pop& choice = pops_by_pid[pid][k];
      if (choice.ambiguous) continue;
      if (decided_by < 0) {
        decided_by = static_cast<int>(pid);
        agreed = choice.registration;
      } else if (choice.registration != agreed) {
        return fmt::format(
            "bsp_pop_reg number {} of the superstep removes registration #{} on pid {} but #{} on pid {}", k + 1,
            agreed, decided_by, choice.registration, pid);
      }
    }
    std::vector<std::uint32_t> live = candidates(pops_[k].address, k);
    if (std::find(live.begin(), live.end(), agreed) == live.end()) {
      return fmt::format(
          "bsp_pop_reg number {} of the superstep names address {} here, which is not registration #{} "
          "that the other processes remove",
          k + 1, pops_[k].address, agreed);
    }
    pops_[k].index = agreed;
  }
  return {};
}

std::optional<std::uint32_t> RegistrationTable::find_slow(const void* address) const {
  auto found = by_address_.find(address);
  if (found == by_address_.end() || found->second.empty()) return std::nullopt;
  last_found_address_ = address;
  last_found_index_ = found->second.back();
  last_found_valid_ = true;
  return last_found_index_;
}

void RegistrationTable::commit(std::span<const std::vector<std::uint64_t>> pushes_by_pid) {
  last_found_valid_ = false;
  if (!pushes_by_pid.empty()) remote_sizes_.resize(pushes_by_pid.size());
  for (std::size_t pid = 0; pid < pushes_by_pid.size(); ++pid) {
    std::vector<std::uint64_t>& sizes = remote_sizes_[pid];
    sizes.resize(entries_.size(), 0);
    sizes.insert(sizes.end(), pushes_by_pid[pid].begin(), pushes_by_pid[pid].end());
  }
  for (const Registration& pushed : pushed_) {
    by_address_[pushed.address].push_back(static_cast<std::uint32_t>(entries_.size()));
    entries_.push_back(pushed);
  }
  for (const PendingPop& pop : pops_) {
    Registration& entry = entries_[pop.index];
    entry.active = false;
    auto& stack = by_address_[entry.address];
    stack.erase(std::remove(stack.begin(), stack.end(), pop.index), stack.end());
    if (stack.empty()) by_address_.erase(entry.address);
  }
  pushed_.clear();
  pops_.clear();
}

}  // namespace bsp
