// bsplib/superstep_records.h: what a superstep sends to each peer. All communication a
// process posts for one destination in a superstep is appended, in call order, to one
// byte stream of records; bsp_sync cuts the stream into channel payloads (so many small
// puts share a frame: packing), and the receiver parses the same stream back. Records may
// straddle payloads. Layout (little-endian, unaligned):
//
//   put          u8 kind, u32 registration, u32 offset, u32 size, size bytes
//   put_strided  u8 kind, u32 registration, u32 offset, u32 size, u32 stride, u32 count,
//                count x size bytes: count puts of size bytes each, the k-th at offset +
//                k * stride, applied in that order (a run of equal puts at equal steps,
//                combined: bspbench's h-relation, a column of a matrix)
//   get_request  u8 kind, u32 registration, u32 offset, u32 size, u32 request id
//   get_reply    u8 kind, u32 request id, u32 piece offset, u32 size, size bytes
//   message      u8 kind, u32 tag size, u32 payload size, tag bytes, payload bytes
//   queue_message  u8 kind, u32 queue, u32 payload size, payload bytes: a message of the
//                C++ interface's typed queue number `queue` (bsp::queue, bsplib/cpp/),
//                delivered to that queue's inbox, never to the bsp_move queue; no tag
//   put_pulled   u8 kind, u32 registration, u32 offset, u32 size, u64 token
//   get_reply_pulled  u8 kind, u32 request id, u32 piece offset, u32 size, u64 token
//   end          u8 kind, u32 superstep, u8 flags (bit 0: the sender is in bsp_end; bit 1: it
//                called bsp_set_tagsize),
//                u32 next tag size, u32 get requests sent to this peer,
//                u32 pushes, pushes x u64 size, u32 pops, pops x (u32 registration, u8 ambiguous)
//
// The sparse protocol (engine_sparse.cc) sends records only to the processes they are
// for, so each superstep's records are bracketed, and the barrier travels as records too:
//   open         u8 kind, u32 superstep                 (the sender's records of it follow)
//   close        u8 kind, u32 superstep, u32 get requests in them
//   ack          u8 kind, u32 superstep                 (the receiver has them all)
//   barrier      u8 kind, u32 body size, body           (dissemination_barrier.h)
//
// `end` closes a superstep's records from one sender and says what its collective calls
// were (bsp_sync or bsp_end, bsp_set_tagsize, the registrations pushed and popped), so
// every process can check that all made the same ones; get replies for that superstep
// follow it (the server answers once it has every peer's `end`).
//
// The *_pulled forms carry no data: it waits in the sender's staging memory (shm's
// Push-Pull path, recovery::Channel::stage), and the receiver copies it from there,
// straight into the destination, by the token.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "bsplib/byte_stream.h"

namespace bsp::records {

enum class Kind : std::uint8_t {
  put = 1,
  get_request = 2,
  get_reply = 3,
  message = 4,
  end = 5,
  put_pulled = 6,
  get_reply_pulled = 7,
  open = 8,
  close = 9,
  ack = 10,
  barrier = 11,
  put_strided = 12,
  queue_message = 13
};

inline constexpr std::size_t kPutHeader = 13;
inline constexpr std::size_t kStridedHeader = 21;
// A strided record holds at most this many bytes of data (a longer run starts a new
// record); one announcing more, or no puts, or puts of no bytes, is damage.
inline constexpr std::uint64_t kMaxStridedData = 1u << 30;
inline constexpr std::size_t kGetRequestSize = 17;
inline constexpr std::size_t kGetReplyHeader = 13;
inline constexpr std::size_t kMessageHeader = 9;
inline constexpr std::size_t kQueueMessageHeader = 9;
// Queue numbers of the C++ interface are below this (more queues alive at once than any
// program makes): a record naming another is damage.
inline constexpr std::uint32_t kMaxQueues = 1u << 16;
inline constexpr std::size_t kEndHeader = 18;  // up to the push sizes
inline constexpr std::size_t kEndPush = 8;
inline constexpr std::size_t kEndPop = 5;
inline constexpr std::size_t kPulledSize = 21;  // both pulled forms
inline constexpr std::size_t kOpenSize = 5;
inline constexpr std::size_t kCloseSize = 9;
inline constexpr std::size_t kAckSize = 5;
inline constexpr std::size_t kBarrierHeader = 5;
// A barrier record carries every process's registration changes at most: more than this
// is damage.
inline constexpr std::uint32_t kMaxBarrierBody = 1u << 30;
// More pushes or pops in one superstep than any program makes: a record announcing more
// is damaged.
inline constexpr std::uint32_t kMaxRegistrationChanges = 1u << 20;

static_assert(kEndHeader == 1 + 4 + 1 + 4 + 4 + 4);

inline constexpr std::uint8_t kEndFlagFinal = 1;  // the sender is in bsp_end
// The sender called bsp_set_tagsize in this superstep (every process must, even with the
// size in force: a call on only some is an error the size alone does not show).
inline constexpr std::uint8_t kEndFlagSetTagsize = 2;

struct Put {
  std::uint32_t registration, offset, size;
  std::size_t data_at;      // position of the data in the stream
  std::uint64_t token = 0;  // pulled: where the sender staged it
  bool pulled = false;
};
// A run of count puts of size bytes, the k-th at offset + k * stride, its data at
// data_at + k * size.
struct StridedPut {
  std::uint32_t registration, offset, size, stride, count;
  std::size_t data_at;
  // The bytes from the first put's offset to the end of the last one.
  std::uint64_t extent() const { return std::uint64_t{count - 1} * stride + size; }
};
struct GetRequest {
  std::uint32_t registration, offset, size, request_id;
};
struct GetReply {
  std::uint32_t request_id, piece_offset, size;
  std::size_t data_at;
  std::uint64_t token = 0;
  bool pulled = false;
};
struct Message {
  std::uint32_t tag_size, payload_size;
  std::size_t tag_at;  // payload follows the tag
};
// One piece of a queue message's payload (the C++ interface sends a tuple's components
// and its vectors' elements from where they lie).
struct Piece {
  const void* data;
  std::size_t size;
};
struct QueueMessage {
  std::uint32_t queue, payload_size;
  std::size_t payload_at;
};
// One bsp_pop_reg as its caller resolved it: the registration it removes, and whether
// the address had several live registrations (NULL registered twice, say), so that
// another process's unambiguous choice may decide which one it is.
struct Pop {
  std::uint32_t registration;
  bool ambiguous;
};
struct End {
  std::uint32_t superstep = 0;
  std::uint8_t flags = 0;
  std::uint32_t next_tagsize = 0, get_requests = 0;
  std::vector<std::uint64_t> pushes;  // the sizes registered, in call order
  std::vector<Pop> pops;
};

// ---- writing ----
class Writer {
 public:
  explicit Writer(ByteStream& out) : out_(out) {}
  ByteStream& stream() { return out_; }
  void put(std::uint32_t registration, std::uint32_t offset, const void* data, std::uint32_t size) {
    // One extend for header and data: the cost of the many small puts of a program.
    std::byte* at = out_.extend(kPutHeader + size);
    write_put_header(at, registration, offset, size);
    copy_small(at + kPutHeader, data, size);
  }
  // A put's header alone: its size bytes of data are appended after it by the caller.
  void put_header(std::uint32_t registration, std::uint32_t offset, std::uint32_t size) {
    write_put_header(out_.extend(kPutHeader), registration, offset, size);
  }
  void put_pulled(std::uint32_t registration, std::uint32_t offset, std::uint32_t size, std::uint64_t token) {
    head(Kind::put_pulled).u32(registration).u32(offset).u32(size).u64(token);
  }
  void get_reply_pulled(std::uint32_t request_id, std::uint32_t piece_offset, std::uint32_t size, std::uint64_t token) {
    head(Kind::get_reply_pulled).u32(request_id).u32(piece_offset).u32(size).u64(token);
  }
  void get_request(std::uint32_t registration, std::uint32_t offset, std::uint32_t size, std::uint32_t request_id) {
    head(Kind::get_request).u32(registration).u32(offset).u32(size).u32(request_id);
  }
  void get_reply(std::uint32_t request_id, std::uint32_t piece_offset, const void* data, std::uint32_t size) {
    head(Kind::get_reply).u32(request_id).u32(piece_offset).u32(size).bytes(data, size);
  }
  // A get reply's header alone: its size bytes of data follow it (sent from where they lie).
  void get_reply_header(std::uint32_t request_id, std::uint32_t piece_offset, std::uint32_t size) {
    head(Kind::get_reply).u32(request_id).u32(piece_offset).u32(size);
  }
  void message(const void* tag, std::uint32_t tag_size, const void* payload, std::uint32_t payload_size) {
    head(Kind::message).u32(tag_size).u32(payload_size).bytes(tag, tag_size).bytes(payload, payload_size);
  }
  // A queue message whose payload is the pieces, one after another (total: their sizes' sum).
  void queue_message(std::uint32_t queue, const Piece* pieces, std::size_t count, std::uint32_t total) {
    head(Kind::queue_message).u32(queue).u32(total);
    for (std::size_t i = 0; i < count; ++i) bytes(pieces[i].data, pieces[i].size);
  }
  void open(std::uint32_t superstep) { head(Kind::open).u32(superstep); }
  void close(std::uint32_t superstep, std::uint32_t get_requests) {
    head(Kind::close).u32(superstep).u32(get_requests);
  }
  void ack(std::uint32_t superstep) { head(Kind::ack).u32(superstep); }
  void barrier(std::span<const std::byte> body) {
    head(Kind::barrier).u32(static_cast<std::uint32_t>(body.size())).bytes(body.data(), body.size());
  }
  void end(const End& end) {
    head(Kind::end).u32(end.superstep).u8(end.flags).u32(end.next_tagsize).u32(end.get_requests);
    u32(static_cast<std::uint32_t>(end.pushes.size()));
    for (std::uint64_t size : end.pushes) u64(size);
    u32(static_cast<std::uint32_t>(end.pops.size()));
    for (const Pop& pop : end.pops) u32(pop.registration).u8(pop.ambiguous ? 1 : 0);
  }

  static void write_put_header(std::byte* at, std::uint32_t registration, std::uint32_t offset, std::uint32_t size) {
    at[0] = static_cast<std::byte>(Kind::put);
    std::memcpy(at + 1, &registration, 4);
    std::memcpy(at + 5, &offset, 4);
    std::memcpy(at + 9, &size, 4);
  }
  // Copies size bytes; the common word sizes of a put without a call into memcpy.
  static void copy_small(std::byte* to, const void* from, std::size_t size) {
    switch (size) {
      case 4:
        std::memcpy(to, from, 4);
        return;
      case 8:
        std::memcpy(to, from, 8);
        return;
      case 16:
        std::memcpy(to, from, 16);
        return;
      default:
        if (size) copy_bytes(to, from, size);  // bulk_copy.h: large ones avoid a slow memcpy case
    }
  }

 private:
  Writer& head(Kind kind) {
    *out_.extend(1) = static_cast<std::byte>(kind);
    return *this;
  }
  Writer& u8(std::uint8_t value) { return bytes(&value, 1); }
  Writer& u32(std::uint32_t value) { return bytes(&value, 4); }
  Writer& u64(std::uint64_t value) { return bytes(&value, 8); }
  Writer& bytes(const void* data, std::size_t size) {
    out_.append(data, size);
    return *this;
  }
  ByteStream& out_;
};

// Extends the put record at stream[at] (the stream's last record) by size bytes of data:
// two puts to adjacent areas of one registration become one record (Oxford's
// -fcombine-puts). The caller checked that the record is the last and still unsent.
inline void extend_put(ByteStream& stream, std::size_t at, const void* data, std::uint32_t size) {
  std::uint32_t total;
  std::memcpy(&total, stream.data() + at + 9, 4);
  total += size;
  Writer::copy_small(stream.extend(size), data, size);
  std::memcpy(stream.data() + at + 9, &total, 4);
}

// Turns the put record at stream[at] (the stream's last, unsent, of size bytes) into a
// strided record of two puts: it, and size bytes of data at offset + stride. The record
// grows by 8 header bytes; its data moves up by them (at most a put's few bytes).
inline void start_strided(ByteStream& stream, std::size_t at, std::uint32_t stride, const void* data,
                          std::uint32_t size) {
  stream.extend(kStridedHeader - kPutHeader + size);
  std::byte* record = stream.data() + at;
  std::memmove(record + kStridedHeader, record + kPutHeader, size);
  record[0] = static_cast<std::byte>(Kind::put_strided);
  std::uint32_t count = 2;
  std::memcpy(record + 13, &stride, 4);
  std::memcpy(record + 17, &count, 4);
  Writer::copy_small(record + kStridedHeader + size, data, size);
}
// Appends one more put (its size bytes of data) to the strided record at stream[at], the
// stream's last, unsent.
inline void extend_strided(ByteStream& stream, std::size_t at, const void* data, std::uint32_t size) {
  Writer::copy_small(stream.extend(size), data, size);
  std::byte* count_at = stream.data() + at + 17;
  std::uint32_t count;
  std::memcpy(&count, count_at, 4);
  ++count;
  std::memcpy(count_at, &count, 4);
}

// ---- reading ----
inline std::uint32_t read_u32(const std::byte* at) {
  std::uint32_t value;
  std::memcpy(&value, at, 4);
  return value;
}
inline std::uint64_t read_u64(const std::byte* at) {
  std::uint64_t value;
  std::memcpy(&value, at, 8);
  return value;
}

// Size of the complete record starting at stream[pos], or 0 if it has not all arrived.
// Sets bad when the kind byte is not a record kind or a length is impossible.
inline std::size_t record_size(std::span<const std::byte> stream, std::size_t pos, bool& bad) {
  std::size_t available = stream.size() - pos;
  if (available < 1) return 0;
  const std::byte* at = stream.data() + pos;
  switch (static_cast<Kind>(at[0])) {
    case Kind::put:
    case Kind::get_reply: {
      if (available < kPutHeader) return 0;
      std::size_t total = kPutHeader + read_u32(at + 9);
      return available < total ? 0 : total;
    }
    case Kind::put_strided: {
      if (available < kStridedHeader) return 0;
      std::uint64_t size = read_u32(at + 9), count = read_u32(at + 17);
      if (size == 0 || count == 0 || size * count > kMaxStridedData) break;
      std::size_t total = kStridedHeader + size * count;
      return available < total ? 0 : total;
    }
    case Kind::get_request:
      return available < kGetRequestSize ? 0 : kGetRequestSize;
    case Kind::put_pulled:
    case Kind::get_reply_pulled:
      return available < kPulledSize ? 0 : kPulledSize;
    case Kind::message: {
      if (available < kMessageHeader) return 0;
      std::size_t total = kMessageHeader + std::size_t{read_u32(at + 1)} + read_u32(at + 5);
      return available < total ? 0 : total;
    }
    case Kind::queue_message: {
      if (available < kQueueMessageHeader) return 0;
      if (read_u32(at + 1) >= kMaxQueues) break;
      std::size_t total = kQueueMessageHeader + std::size_t{read_u32(at + 5)};
      return available < total ? 0 : total;
    }
    case Kind::end: {
      if (available < kEndHeader) return 0;
      std::uint32_t pushes = read_u32(at + 14);
      if (pushes > kMaxRegistrationChanges) break;
      std::size_t pops_at = kEndHeader + std::size_t{pushes} * kEndPush;
      if (available < pops_at + 4) return 0;
      std::uint32_t pops = read_u32(at + pops_at);
      if (pops > kMaxRegistrationChanges) break;
      std::size_t total = pops_at + 4 + std::size_t{pops} * kEndPop;
      return available < total ? 0 : total;
    }
    case Kind::open:
    case Kind::ack:
      return available < kOpenSize ? 0 : kOpenSize;
    case Kind::close:
      return available < kCloseSize ? 0 : kCloseSize;
    case Kind::barrier: {
      if (available < kBarrierHeader) return 0;
      std::uint32_t body = read_u32(at + 1);
      if (body > kMaxBarrierBody) break;
      std::size_t total = kBarrierHeader + std::size_t{body};
      return available < total ? 0 : total;
    }
  }
  bad = true;
  return 0;
}

inline Put read_put(const std::byte* at, std::size_t pos) {
  return Put{read_u32(at + 1), read_u32(at + 5), read_u32(at + 9), pos + kPutHeader};
}
inline StridedPut read_strided(const std::byte* at, std::size_t pos) {
  return StridedPut{read_u32(at + 1),  read_u32(at + 5),  read_u32(at + 9),
                    read_u32(at + 13), read_u32(at + 17), pos + kStridedHeader};
}
inline Put read_put_pulled(const std::byte* at) {
  return Put{read_u32(at + 1), read_u32(at + 5), read_u32(at + 9), 0, read_u64(at + 13), true};
}
inline GetReply read_get_reply_pulled(const std::byte* at) {
  return GetReply{read_u32(at + 1), read_u32(at + 5), read_u32(at + 9), 0, read_u64(at + 13), true};
}
inline GetRequest read_get_request(const std::byte* at) {
  return GetRequest{read_u32(at + 1), read_u32(at + 5), read_u32(at + 9), read_u32(at + 13)};
}
inline GetReply read_get_reply(const std::byte* at, std::size_t pos) {
  return GetReply{read_u32(at + 1), read_u32(at + 5), read_u32(at + 9), pos + kGetReplyHeader};
}
inline Message read_message(const std::byte* at, std::size_t pos) {
  return Message{read_u32(at + 1), read_u32(at + 5), pos + kMessageHeader};
}
inline QueueMessage read_queue_message(const std::byte* at, std::size_t pos) {
  return QueueMessage{read_u32(at + 1), read_u32(at + 5), pos + kQueueMessageHeader};
}
inline End read_end(const std::byte* at) {
  End end;
  end.superstep = read_u32(at + 1);
  end.flags = static_cast<std::uint8_t>(at[5]);
  end.next_tagsize = read_u32(at + 6);
  end.get_requests = read_u32(at + 10);
  std::uint32_t pushes = read_u32(at + 14);
  const std::byte* next = at + kEndHeader;
  for (std::uint32_t i = 0; i < pushes; ++i, next += kEndPush) end.pushes.push_back(read_u64(next));
  std::uint32_t pops = read_u32(next);
  next += 4;
  for (std::uint32_t i = 0; i < pops; ++i, next += kEndPop) {
    end.pops.push_back(Pop{read_u32(next), next[4] != std::byte{0}});
  }
  return end;
}

}  // namespace bsp::records
