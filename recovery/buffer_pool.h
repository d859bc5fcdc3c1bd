// recovery/buffer_pool.h: the one pool of n MTU-sized buffers shared by every link for
// sending (a frame stays in its buffer until positively acknowledged) and receiving
// (out-of-order frames wait in a buffer until the gap before them is filled). Paper 001,
// section 2.2: when no buffer is free, send fails and the engine makes progress. Also how
// many buffers a process gets by default for its MTU and job size (pool_frames).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

namespace bsp::recovery {

// The pool's size in buffers. requested (--buffers, or the transport's suggestion) stands
// when not 0. Otherwise 8 MiB worth (1024 to 4096 frames), shrunk as p grows so that the
// job's pools on one host stay within kHostPoolBytes (512 MiB: 8 MiB each up to p = 64,
// 2 MiB at 256), but never below what keeps the link-window rule whole: a window of
// pool / 2 / (p - 1) frames per link of at least kMinLinkWindow (2), i.e. 4 (p - 1) frames.
std::size_t pool_frames(std::size_t requested, std::size_t mtu, int nprocs);

class BufferPool {
 public:
  using Id = std::uint32_t;

  BufferPool(std::size_t count, std::size_t buffer_size);

  // A free buffer, or nothing when all are in use.
  std::optional<Id> acquire();
  void release(Id id);

  std::span<std::byte> bytes(Id id) { return {storage_.get() + offset(id), buffer_size_}; }
  std::span<const std::byte> bytes(Id id) const { return {storage_.get() + offset(id), buffer_size_}; }

  std::size_t capacity() const { return capacity_; }
  std::size_t free_count() const { return free_.size(); }
  std::size_t buffer_size() const { return buffer_size_; }
  // Buffers handed out since construction (the consumption rate of the "buffer" policy).
  std::uint64_t acquisitions() const { return acquisitions_; }

 private:
  std::size_t offset(Id id) const { return static_cast<std::size_t>(id) * buffer_size_; }

  std::size_t capacity_;
  std::size_t buffer_size_;
  // Not initialised: a page costs memory only once a buffer on it is used, and the free
  // stack hands out the most recently used buffers first, so a pool larger than what is
  // ever in flight costs only address space.
  std::unique_ptr<std::byte[]> storage_;
  std::vector<Id> free_;  // stack: the most recently released (cache-warm) goes out first
  std::uint64_t acquisitions_ = 0;
};

}  // namespace bsp::recovery
