// transport/shm/shm_segment.h: a process's inbox, the shared memory its peers on the
// same host write frames into: one ring (shm_ring.h) per sender, plus a flag the owner
// raises before it sleeps so that senders know to wake it.
//
// The owner creates it as an unlinked memory file (memfd_create): nothing has a name,
// and the memory goes when the last process holding it ends, even by SIGKILL. Its size
// is sealed (a peer cannot shrink it under the others' mappings). A peer
// maps it through /proc/<owner's OS pid>/fd/<descriptor> (the kernel lets only processes
// that may trace the owner open it: the same user), and accepts it only if its header
// carries the job id, the owner's pid and a MAC made with the job's secret: a recycled
// OS pid or another job's memory is refused.
//
//   header (128 bytes): u64 magic "BSPSHM01" | u32 version | u32 job id | i32 owner pid |
//                       i32 processes | u64 ring capacity | u64 proof (MAC) |
//                       (own cache line) u32 sleeping
//   ring of sender 0, ring of sender 1, ...  (kRingControlBytes + capacity each)
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "auth/mac.h"
#include "transport/file_descriptor.h"
#include "transport/shm/shm_ring.h"

namespace bsp::transport::shm {

struct InboxShape {
  std::uint32_t job_id = 0;
  int owner = 0;  // pid in the job
  int processes = 1;
  std::size_t capacity = 0;  // bytes of each ring's data (a power of two)
};

// A mapping of an inbox (own or a peer's); unmaps when it goes.
class InboxMapping {
 public:
  InboxMapping() = default;
  InboxMapping(InboxMapping&& other) noexcept;
  InboxMapping& operator=(InboxMapping&& other) noexcept;
  ~InboxMapping();

  // Creates this process's inbox (owner = shape.owner). Throws std::runtime_error.
  static InboxMapping create(const InboxShape& shape, const auth::Key& secret);
  // Maps peer `shape.owner`'s inbox, published as descriptor `fd` of OS process
  // `os_pid`; checks its header against shape and the secret. Throws with the reason.
  static InboxMapping open_peer(int os_pid, int fd, const InboxShape& shape, const auth::Key& secret);

  int fd() const { return fd_.get(); }
  // The region of sender's ring (kRingControlBytes + capacity bytes).
  std::byte* ring_region(int sender) const;
  std::atomic<std::uint32_t>& sleeping() const;

 private:
  FileDescriptor fd_;
  std::byte* base_ = nullptr;
  std::size_t size_ = 0;
  InboxShape shape_;
};

// A process's staging memory for pulled transfers (Push-Pull): written by its owner,
// read by the peers of its host, which map it read-only. A sealed memfd of fixed size;
// pages cost memory only once written.
class StagingMapping {
 public:
  StagingMapping() = default;
  StagingMapping(StagingMapping&& other) noexcept;
  StagingMapping& operator=(StagingMapping&& other) noexcept;
  ~StagingMapping();

  static StagingMapping create(std::size_t bytes);
  // Peer `owner`'s staging area, descriptor `fd` of OS process `os_pid`: a sealed memory
  // file of exactly `bytes`, mapped read-only. Throws with the reason.
  static StagingMapping open_peer(int os_pid, int fd, int owner, std::size_t bytes);

  int fd() const { return fd_.get(); }
  std::byte* data() const { return base_; }
  std::size_t size() const { return size_; }

 private:
  FileDescriptor fd_;
  std::byte* base_ = nullptr;
  std::size_t size_ = 0;
};

// Bytes of an inbox of this shape.
std::size_t inbox_bytes(const InboxShape& shape);

}  // namespace bsp::transport::shm
