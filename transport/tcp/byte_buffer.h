// transport/tcp/byte_buffer.h: a byte queue that socket reads append to and frames are
// consumed from, without zero-filling the room a read may use (a std::vector resize would
// clear it on every recv). release() gives the memory back when a connection closes, so
// a process that talked to many peers once keeps no buffer per peer.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <span>

namespace bsp::transport::tcp {

class ByteBuffer {
 public:
  std::span<const std::byte> bytes() const { return {data_.get() + begin_, end_ - begin_}; }
  bool empty() const { return begin_ == end_; }
  void consume(std::size_t count) {
    begin_ += count;
    if (begin_ == end_) begin_ = end_ = 0;
  }
  // At least `want` writable bytes after the stored ones (moving or growing storage).
  std::span<std::byte> room(std::size_t want) {
    if (capacity_ - end_ < want) {
      std::size_t stored = end_ - begin_;
      if (stored + want > capacity_ || begin_ == 0) {
        std::size_t capacity = std::max(2 * capacity_, stored + want);
        auto bigger = std::make_unique_for_overwrite<std::byte[]>(capacity);
        if (stored) std::memcpy(bigger.get(), data_.get() + begin_, stored);
        data_ = std::move(bigger);
        capacity_ = capacity;
      } else {
        std::memmove(data_.get(), data_.get() + begin_, stored);
      }
      begin_ = 0;
      end_ = stored;
    }
    return {data_.get() + end_, capacity_ - end_};
  }
  void grow(std::size_t count) { end_ += count; }
  // Frees the storage once nothing is stored.
  void release() {
    if (empty()) {
      data_.reset();
      capacity_ = begin_ = end_ = 0;
    }
  }

 private:
  std::unique_ptr<std::byte[]> data_;
  std::size_t capacity_ = 0, begin_ = 0, end_ = 0;
};

}  // namespace bsp::transport::tcp
