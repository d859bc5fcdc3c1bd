/* bsp/entry.h: the few library entry points the C++ interface (bsp/bsp.hpp) needs beyond
 * bsp.h: typed queues with their own message streams, the superstep number (for futures)
 * and a remote registration's size (for element-index bounds checks). Internal to the C++
 * interface: not part of the BSPlib API, and may change with it. */
#ifndef BSPLIB_CPP_ENTRY_H
#define BSPLIB_CPP_ENTRY_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One piece of a queue message's payload, read at the call. */
struct bsp_cpp_piece {
  const void* data;
  size_t size;
};

/* Sends to queue number `queue` on pid a message whose payload is the pieces in order;
 * it arrives in that queue's inbox at the next sync. */
void bsp_cpp_queue_send(int pid, unsigned queue, const struct bsp_cpp_piece* pieces, size_t count);
/* The number of messages the last sync delivered to queue's inbox. */
size_t bsp_cpp_queue_size(unsigned queue);
/* Where message i of an inbox lies: its payload is bytes[payload_at, payload_at + payload_size). */
struct bsp_cpp_message_entry {
  size_t tag_at, tag_size, payload_at, payload_size;
};
/* The whole inbox of queue (valid until the next sync): *bytes, and *count entries. */
const struct bsp_cpp_message_entry* bsp_cpp_queue_view(unsigned queue, const char** bytes, size_t* count);
/* Message index of queue's inbox (valid until the next sync); *size gets its payload size. */
const void* bsp_cpp_queue_message(unsigned queue, size_t index, size_t* size);
/* Supersteps completed since bsp_begin. */
long bsp_cpp_superstep(void);
/* Bytes of pid's registration of ident (registered here at ident), -1 if not known. */
long long bsp_cpp_remote_size(int pid, const void* ident);

#ifdef __cplusplus
}
#endif

#endif
