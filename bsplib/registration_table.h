// bsplib/registration_table.h: the DRMA registrations of one process. Registration is
// collective and matched by order: the k-th bsp_push_reg on every process names the same
// logical area, so a put names "registration k" and each process maps k to its own
// address and size. Pushes and pops take effect at the next bsp_sync; lookups during a
// superstep see the table as it was when the superstep began.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

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
  // Records a pop of the most recent registration of address (counting pushes recorded in
  // this superstep). False when address has no registration to pop.
  bool pop(const void* address);

  // The registration index of address in effect now (the most recent one), if any.
  std::optional<std::uint32_t> find(const void* address) const;
  // The registration with index, or nullptr when there is no active one.
  const Registration* get(std::uint32_t index) const;

  // Fingerprint of this superstep's pushes and pops (pops by index), which must be equal
  // on every process; and a readable account of them for error messages.
  std::uint64_t superstep_fingerprint() const;
  std::string superstep_summary() const;
  std::uint32_t pushes_this_superstep() const { return pending_pushes_; }

  // Applies this superstep's pushes and pops (called at the end of bsp_sync).
  void commit();

 private:
  std::vector<Registration> entries_;  // index = registration number, never reused
  std::unordered_map<const void*, std::vector<std::uint32_t>> by_address_;  // active, oldest first
  struct Change {
    bool push;
    std::uint32_t index;
  };
  std::vector<Change> pending_;
  std::uint32_t pending_pushes_ = 0;
  std::vector<Registration> pushed_;  // entries pushed this superstep (not yet in entries_)
};

}  // namespace bsp
