// bsplib/message_queue.h: BSMP (bsp_send / bsp_move) storage. Messages sent in superstep
// s are collected as they arrive and become the queue of superstep s+1 at the end of
// bsp_sync; the queue's bytes stay put until the next sync, so bsp_hpmove can hand out
// pointers into them. Messages not moved by then are discarded, as the standard says.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace bsp {

class MessageQueue {
 public:
  struct Message {
    const std::byte* tag;
    std::size_t tag_size;
    const std::byte* payload;
    std::size_t payload_size;
  };

  // Stores a message arriving for the next superstep (copied).
  void add_arriving(std::span<const std::byte> tag, std::span<const std::byte> payload);
  // End of bsp_sync: the arrived messages become the queue.
  void deliver_arrived();

  std::size_t size() const { return entries_.size() - next_; }
  std::size_t payload_bytes() const { return payload_bytes_; }
  // The first message not yet moved; valid while size() > 0.
  Message front() const;
  void pop_front();
  // Every message delivered at the last sync, moved or not (the C++ queues read them by
  // index, as often as they like, until the next sync).
  std::size_t delivered() const { return entries_.size(); }
  Message at(std::size_t index) const;
  // Where each delivered message lies in storage().
  struct Entry {
    std::size_t tag_at, tag_size, payload_at, payload_size;
  };
  std::span<const Entry> entries() const { return entries_; }
  const std::byte* storage() const { return bytes_.data(); }

 private:
  struct Store {
    std::vector<std::byte> bytes;
    std::vector<Entry> entries;
  };
  Store arriving_;
  std::vector<std::byte> bytes_;  // the current queue's storage
  std::vector<Entry> entries_;
  std::size_t next_ = 0;
  std::size_t payload_bytes_ = 0;
};

}  // namespace bsp
