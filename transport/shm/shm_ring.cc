// transport/shm/shm_ring.cc: the checked single-producer single-consumer ring (shm_ring.h).
#include "transport/shm/shm_ring.h"

#include <cstring>

namespace bsp::transport::shm {
namespace {

// A u32 of the shared data, read once (the other process may change it at any time: the
// value read is what gets checked and used).
std::uint32_t load_u32(const std::byte* at) {
  return __atomic_load_n(reinterpret_cast<const std::uint32_t*>(at), __ATOMIC_RELAXED);
}

void store_u32(std::byte* at, std::uint32_t value) {
  __atomic_store_n(reinterpret_cast<std::uint32_t*>(at), value, __ATOMIC_RELAXED);
}

}  // namespace

RingWriter::RingWriter(std::byte* region, std::size_t capacity)
    : control_(reinterpret_cast<RingControl*>(region)), data_(region + kRingControlBytes), capacity_(capacity) {}

bool RingWriter::room_for(std::size_t need) {
  if (head_ + need - tail_seen_ <= capacity_) return true;
  std::uint64_t tail = control_->tail.load(std::memory_order_acquire);
  if (tail > head_ || head_ - tail > capacity_ || (tail & 7) != 0) {
    broken_ = true;
    return false;
  }
  tail_seen_ = tail;
  return head_ + need - tail_seen_ <= capacity_;
}

std::span<std::byte> RingWriter::reserve(std::size_t size) {
  if (broken_ || !control_ || size > max_frame()) return {};
  const std::size_t need = ring_footprint(size);
  std::size_t at = static_cast<std::size_t>(head_ & (capacity_ - 1));
  const std::size_t to_end = capacity_ - at;
  if (need > to_end) {  // wrap: mark the rest of the data skipped, start at 0
    if (!room_for(to_end + need)) return {};
    store_u32(data_ + at, kWrapMarker);
    head_ += to_end;
    at = 0;
  } else if (!room_for(need)) {
    return {};
  }
  reserved_at_ = at;
  return {data_ + at + 4, size};
}

void RingWriter::commit(std::size_t size) {
  store_u32(data_ + reserved_at_, static_cast<std::uint32_t>(size));
  head_ += ring_footprint(size);
  // An exchange, not a store: a full barrier, so a later load (the sender's look at the
  // receiver's sleeping word) cannot pass it, and needs no fence of its own.
  control_->head.exchange(head_, std::memory_order_seq_cst);
}

bool RingWriter::want_space() {
  if (!control_) return false;
  control_->space_wanted.store(1, std::memory_order_seq_cst);
  std::atomic_thread_fence(std::memory_order_seq_cst);  // the flag before the tail's load
  return consumer_moved();
}

bool RingWriter::write(std::span<const std::byte> frame) {
  std::span<std::byte> space = reserve(frame.size());
  if (space.data() == nullptr) return false;  // full (a reserved empty frame has a place)
  if (!frame.empty()) std::memcpy(space.data(), frame.data(), frame.size());
  commit(frame.size());
  return true;
}

bool RingWriter::post_line(std::uint64_t superstep, std::span<const std::byte> records) {
  if (!control_ || broken_ || records.size() > kSuperstepLineBytes) return false;
  RingControl::SuperstepLine& line = control_->lines[superstep & 1];
  if (!records.empty()) std::memcpy(line.records, records.data(), records.size());
  line.size.store(static_cast<std::uint32_t>(records.size()), std::memory_order_relaxed);
  // An exchange: a full barrier, so the sender's look at the receiver's sleeping word
  // after it cannot pass it (as commit()).
  line.mark.exchange(superstep + 1, std::memory_order_seq_cst);
  return true;
}

RingReader::RingReader(std::byte* region, std::size_t capacity)
    : control_(reinterpret_cast<RingControl*>(region)), data_(region + kRingControlBytes), capacity_(capacity) {}

bool RingReader::fail(const char* why) {
  broken_ = true;
  why_ = why;
  return false;
}

std::span<const std::byte> RingReader::peek() {
  peeked_ = 0;
  if (broken_ || !control_) return {};
  for (;;) {
    const std::uint64_t head = control_->head.load(std::memory_order_acquire);
    if (head == tail_) return {};
    const std::uint64_t available = head - tail_;
    if (head < tail_ || available > capacity_ || (available & 7) != 0) {
      fail("the sender published a ring position that cannot be");
      return {};
    }
    const std::size_t at = static_cast<std::size_t>(tail_ & (capacity_ - 1));
    const std::uint32_t length = load_u32(data_ + at);
    if (length == kWrapMarker) {
      const std::size_t to_end = capacity_ - at;
      if (to_end > available) {
        fail("a wrap marker points past what the sender published");
        return {};
      }
      tail_ += to_end;
      control_->tail.store(tail_, std::memory_order_release);
      continue;
    }
    const std::size_t footprint = ring_footprint(length);
    if (length > capacity_ / 4 || footprint > available || at + footprint > capacity_) {
      fail("a frame's length does not fit what the sender published");
      return {};
    }
    peeked_ = footprint;
    return {data_ + at + 4, length};
  }
}

long RingReader::take_line(std::uint64_t superstep, std::byte* into) {
  if (!control_ || broken_) return -1;
  const RingControl::SuperstepLine& line = control_->lines[superstep & 1];
  line_wanted_ = superstep + 1;
  if (line.mark.load(std::memory_order_acquire) != superstep + 1) return -1;
  line_wanted_ = 0;
  const std::uint32_t size = line.size.load(std::memory_order_relaxed);
  if (size > kSuperstepLineBytes) {
    fail("a superstep line's size does not fit the line");
    return -1;
  }
  if (size > 0) std::memcpy(into, line.records, size);
  return size;
}

void RingReader::release() {
  if (peeked_ == 0) return;
  tail_ += peeked_;
  peeked_ = 0;
  control_->tail.store(tail_, std::memory_order_seq_cst);  // before take_space_request's load
}

}  // namespace bsp::transport::shm
