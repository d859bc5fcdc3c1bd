// bsplib/byte_stream.h: the growable byte buffer a superstep's records are written to and
// received into. Unlike std::vector<std::byte> it never zero-fills the room it adds, and
// extend() hands back the place to write a record in one step (no per-byte insert, no
// allocation per record): the cost of the many small puts of a program is a bounds-free
// append. Capacity is kept across supersteps (clear() keeps the memory).
#pragma once

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

#include "bsplib/bulk_copy.h"

namespace bsp {

class ByteStream {
 public:
  ByteStream() = default;
  ByteStream(const ByteStream&) = delete;
  ByteStream& operator=(const ByteStream&) = delete;
  ByteStream(ByteStream&& other) noexcept { swap(other); }
  ByteStream& operator=(ByteStream&& other) noexcept {
    swap(other);
    return *this;
  }
  ~ByteStream() { std::free(data_); }

  std::byte* data() { return data_; }
  const std::byte* data() const { return data_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // Makes the stream `count` bytes longer and returns where those bytes begin (their
  // contents are whatever the caller writes there).
  std::byte* extend(std::size_t count) {
    if (capacity_ - size_ < count) grow(count);
    std::byte* at = data_ + size_;
    size_ += count;
    return at;
  }
  // Room for `count` more bytes after the stored ones, without storing them yet: the
  // caller fills it (a transport reading into it) and then extend(count)s, which returns
  // the same place as long as nothing else changed the stream meanwhile.
  std::byte* room(std::size_t count) {
    if (capacity_ - size_ < count) grow(count);
    return data_ + size_;
  }
  void append(const void* bytes, std::size_t count) {
    if (count) copy_bytes(extend(count), bytes, count);
  }
  // Puts `count` bytes at offset `at` (<= size()), moving what lies after it up.
  void insert(std::size_t at, const void* bytes, std::size_t count) {
    const std::size_t after = size_ - at;
    std::byte* end = extend(count);
    if (after) std::memmove(end - after + count, end - after, after);
    if (count) std::memcpy(data_ + at, bytes, count);
  }
  void clear() { size_ = 0; }
  // Drops the first `count` bytes (the records of a finished superstep).
  void erase_front(std::size_t count) {
    if (count >= size_) {
      size_ = 0;
      return;
    }
    std::memmove(data_, data_ + count, size_ - count);
    size_ -= count;
  }

 private:
  [[gnu::noinline]] void grow(std::size_t count) {  // out of line: extend() stays small
    std::size_t capacity = capacity_ ? capacity_ : 256;
    while (capacity - size_ < count) capacity *= 2;
    void* bigger = std::realloc(data_, capacity);
    if (!bigger) throw std::bad_alloc();
    data_ = static_cast<std::byte*>(bigger);
    capacity_ = capacity;
  }
  void swap(ByteStream& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    std::swap(capacity_, other.capacity_);
  }

  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

}  // namespace bsp
