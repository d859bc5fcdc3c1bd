// bsplib/cpp_entry.cc: the entry points of bsp/entry.h, for the C++ interface: typed queue
// messages (the engine's queue_message records), the superstep number and remote
// registration sizes.
#include <cstddef>

#include "bsp/entry.h"
#include "bsplib/profile/profile_recorder.h"
#include "bsplib/runtime.h"

namespace {
bsp::Engine& engine(const char* call) { return bsp::Runtime::instance().engine(call); }
static_assert(sizeof(bsp_cpp_message_entry) == sizeof(bsp::MessageQueue::Entry) &&
              offsetof(bsp_cpp_message_entry, payload_at) == offsetof(bsp::MessageQueue::Entry, payload_at) &&
              offsetof(bsp_cpp_message_entry, payload_size) == offsetof(bsp::MessageQueue::Entry, payload_size));
static_assert(sizeof(bsp_cpp_piece) == sizeof(bsp::records::Piece) &&
              offsetof(bsp_cpp_piece, size) == offsetof(bsp::records::Piece, size));
}  // namespace

extern "C" {

void bsp_cpp_queue_send(int pid, unsigned queue, const bsp_cpp_piece* pieces, size_t count) {
  engine("bsp::queue::send").queue_send(pid, queue, reinterpret_cast<const bsp::records::Piece*>(pieces), count);
  if (auto* recorder = bsp::profile::active()) [[unlikely]] {
    long bytes = 0;
    for (size_t i = 0; i < count; ++i) bytes += static_cast<long>(pieces[i].size);
    recorder->count_send(pid, static_cast<int>(bytes));
  }
}

size_t bsp_cpp_queue_size(unsigned queue) { return engine("bsp::queue").queue_size(queue); }

const bsp_cpp_message_entry* bsp_cpp_queue_view(unsigned queue, const char** bytes, size_t* count) {
  const bsp::MessageQueue* inbox = engine("bsp::queue").queue_inbox(queue);
  if (!inbox || inbox->entries().empty()) {
    *bytes = nullptr;
    *count = 0;
    return nullptr;
  }
  *bytes = reinterpret_cast<const char*>(inbox->storage());
  *count = inbox->entries().size();
  return reinterpret_cast<const bsp_cpp_message_entry*>(inbox->entries().data());
}

const void* bsp_cpp_queue_message(unsigned queue, size_t index, size_t* size) {
  bsp::Engine& e = engine("bsp::queue");
  if (index >= e.queue_size(queue)) {
    e.usage_error("bsp::queue", "message " + std::to_string(index) + " of queue " + std::to_string(queue) +
                                    ", which holds " + std::to_string(e.queue_size(queue)));
  }
  std::span<const std::byte> payload = e.queue_message(queue, index);
  *size = payload.size();
  return payload.data();
}

long bsp_cpp_superstep(void) { return engine("bsp::future").supersteps(); }

long long bsp_cpp_remote_size(int pid, const void* ident) {
  std::optional<std::uint64_t> size = engine("bsp::coarray").remote_size(pid, ident);
  return size ? static_cast<long long>(*size) : -1;
}

}  // extern "C"
