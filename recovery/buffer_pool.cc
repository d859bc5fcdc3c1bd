// recovery/buffer_pool.cc: a free stack over one contiguous allocation.
#include "recovery/buffer_pool.h"

#include <cassert>

namespace bsp::recovery {

BufferPool::BufferPool(std::size_t count, std::size_t buffer_size)
    : capacity_(count), buffer_size_(buffer_size), storage_(new std::byte[count * buffer_size]) {
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
