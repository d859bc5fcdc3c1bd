// recovery/buffer_pool.cc: a free stack over one contiguous allocation, and the default
// pool size for an MTU and a job size.
#include "recovery/buffer_pool.h"

#include <algorithm>
#include <cassert>

#include "recovery/protocol_constants.h"

namespace bsp::recovery {

std::size_t pool_frames(std::size_t requested, std::size_t mtu, int nprocs) {
  if (requested) return std::max(requested, tuning::kMinBuffers);
  mtu = std::max<std::size_t>(mtu, 1);
  const std::size_t processes = static_cast<std::size_t>(std::max(nprocs, 1));
  std::size_t frames = std::clamp(tuning::kDefaultPoolBytes / mtu, tuning::kDefaultBuffers,
                                  tuning::kLargestDefaultPool);
  frames = std::min(frames, tuning::kHostPoolBytes / processes / mtu);
  std::size_t window_floor = tuning::kLinkWindowDivisor * tuning::kMinLinkWindow * (processes - 1);
  return std::max({frames, window_floor, tuning::kMinBuffers});
}

BufferPool::BufferPool(std::size_t count, std::size_t buffer_size)
    : capacity_(count),
      buffer_size_(buffer_size),
      storage_(std::make_unique_for_overwrite<std::byte[]>(count * buffer_size)) {
  free_.reserve(count);
  for (std::size_t i = count; i > 0; --i) free_.push_back(static_cast<Id>(i - 1));
}

std::optional<BufferPool::Id> BufferPool::acquire() {
  if (free_.empty()) return std::nullopt;
  Id id = free_.back();
  free_.pop_back();
  ++acquisitions_;
  return id;
}

void BufferPool::release(Id id) {
  assert(id < capacity_ && free_.size() < capacity_);
  free_.push_back(id);
}

}  // namespace bsp::recovery
