// bsplib/message_queue.cc: the two-generation BSMP queue.
#include "bsplib/message_queue.h"

namespace bsp {

void MessageQueue::add_arriving(std::span<const std::byte> tag, std::span<const std::byte> payload) {
  Entry entry{arriving_.bytes.size(), tag.size(), arriving_.bytes.size() + tag.size(), payload.size()};
  arriving_.bytes.insert(arriving_.bytes.end(), tag.begin(), tag.end());
  arriving_.bytes.insert(arriving_.bytes.end(), payload.begin(), payload.end());
  arriving_.entries.push_back(entry);
}

void MessageQueue::deliver_arrived() {
  bytes_.swap(arriving_.bytes);
  entries_.swap(arriving_.entries);
  arriving_.bytes.clear();
  arriving_.entries.clear();
  next_ = 0;
  payload_bytes_ = 0;
  for (const Entry& entry : entries_) payload_bytes_ += entry.payload_size;
}

MessageQueue::Message MessageQueue::front() const { return at(next_); }

MessageQueue::Message MessageQueue::at(std::size_t index) const {
  const Entry& entry = entries_[index];
  return Message{bytes_.data() + entry.tag_at, entry.tag_size, bytes_.data() + entry.payload_at, entry.payload_size};
}

void MessageQueue::pop_front() {
  payload_bytes_ -= entries_[next_].payload_size;
  ++next_;
}

}  // namespace bsp
