// bsplib/registration_table.cc: registrations, their deferred changes and fingerprint.
#include "bsplib/registration_table.h"

#include <fmt/format.h>

#include <algorithm>

namespace bsp {

void RegistrationTable::push(const void* address, std::size_t size) {
  std::uint32_t index = static_cast<std::uint32_t>(entries_.size() + pushed_.size());
  pushed_.push_back(Registration{address, size, true});
  pending_.push_back(Change{true, index});
  ++pending_pushes_;
}

bool RegistrationTable::pop(const void* address) {
  // The most recent registration of address: pushed earlier in this superstep (and not
  // popped since), else the most recent active one not already popped.
  auto popped = [&](std::uint32_t index) {
    return std::any_of(pending_.begin(), pending_.end(),
                       [&](const Change& c) { return !c.push && c.index == index; });
  };
  for (std::size_t i = pushed_.size(); i-- > 0;) {
    std::uint32_t index = static_cast<std::uint32_t>(entries_.size() + i);
    if (pushed_[i].address == address && !popped(index)) {
      pending_.push_back(Change{false, index});
      return true;
    }
  }
  auto found = by_address_.find(address);
  if (found == by_address_.end()) return false;
  for (auto it = found->second.rbegin(); it != found->second.rend(); ++it) {
    if (!popped(*it)) {
      pending_.push_back(Change{false, *it});
      return true;
    }
  }
  return false;
}

std::optional<std::uint32_t> RegistrationTable::find(const void* address) const {
  auto found = by_address_.find(address);
  if (found == by_address_.end() || found->second.empty()) return std::nullopt;
  return found->second.back();
}

const Registration* RegistrationTable::get(std::uint32_t index) const {
  if (index >= entries_.size() || !entries_[index].active) return nullptr;
  return &entries_[index];
}

std::uint64_t RegistrationTable::superstep_fingerprint() const {
  std::uint64_t hash = 1469598103934665603ull;  // FNV-1a over (kind, index) pairs
  for (const Change& change : pending_) {
    std::uint64_t word = (static_cast<std::uint64_t>(change.push) << 32) | change.index;
    for (int byte = 0; byte < 8; ++byte) {
      hash ^= (word >> (8 * byte)) & 0xFF;
      hash *= 1099511628211ull;
    }
  }
  return hash;
}

std::string RegistrationTable::superstep_summary() const {
  std::string pops;
  for (const Change& change : pending_) {
    if (!change.push) pops += fmt::format("{}#{}", pops.empty() ? "" : ",", change.index);
  }
  return fmt::format("{} bsp_push_reg and {} bsp_pop_reg{}", pending_pushes_,
                     pending_.size() - pending_pushes_, pops.empty() ? "" : " (of registrations " + pops + ")");
}

void RegistrationTable::commit() {
  for (const Registration& pushed : pushed_) {
    by_address_[pushed.address].push_back(static_cast<std::uint32_t>(entries_.size()));
    entries_.push_back(pushed);
  }
  for (const Change& change : pending_) {
    if (change.push) continue;
    Registration& entry = entries_[change.index];
    entry.active = false;
    auto& stack = by_address_[entry.address];
    stack.erase(std::remove(stack.begin(), stack.end(), change.index), stack.end());
    if (stack.empty()) by_address_.erase(entry.address);
  }
  pushed_.clear();
  pending_.clear();
  pending_pushes_ = 0;
}

}  // namespace bsp
