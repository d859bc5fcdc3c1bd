// transport/tcp/frame_stream.h: the tcp transport's stream framing for one peer. Frames go
// out as [u32 length][frame] with one gathered sendmsg, what the kernel does not take is
// queued; frames come in through an inbox and are handed out in place, a large one read
// straight into the memory its sink names (placement). A length of kByeMark or kByeAckMark
// is a marker of the connection layer, handed to StreamEvents. Frames held for a
// connection not yet made (pending) are kept here too, framed alike. Nothing here knows
// of connections, epoll or losses: the caller owns the socket and says what a result means.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "transport/tcp/byte_buffer.h"
#include "transport/transport.h"

namespace bsp::transport::tcp {

// Largest frame. With its 4-byte length a full frame is 45 segments of 1448 bytes
// (Ethernet's MSS with timestamps) and one segment on loopback: under TCP_NODELAY each
// sendmsg pushes its last partial segment, so a frame a few bytes longer than a segment
// costs a tiny segment of its own (a bulk exchange on loopback at half speed; figures.md,
// "tcp frames within a segment").
constexpr std::size_t kTcpMtu = 45 * 1448 - 4;
constexpr std::size_t kReadChunk = 256 * 1024;      // bytes asked of the kernel per recv
constexpr std::size_t kPendingLimit = 256 * 1024;   // bytes held for a peer not yet connected
constexpr std::size_t kPlaceFrom = 16 * 1024;       // frames from this long may be read into the sink's memory
constexpr std::uint32_t kByeMark = 0xFFFFFFFFu;     // in place of a frame length: closing
constexpr std::uint32_t kByeAckMark = 0xFFFFFFFEu;  // the answer to a bye

// What the stream met besides frames, for the connection layer to act on.
class StreamEvents {
 public:
  // pid's bye (bye) or bye-ack; true when pid's link is lost after it (then nothing after
  // the marker counts).
  virtual bool on_marker(int pid, bool bye) = 0;
  // pid's stream cannot be framed any more (a length over kTcpMtu).
  virtual void on_bad_stream(int pid, std::string why) = 0;

 protected:
  ~StreamEvents() = default;
};

class FrameStream {
 public:
  // ---- writing
  enum class Sent { whole, queued, failed };
  // [u32 length][head][body] in one sendmsg on fd, unless bytes are queued already (the
  // caller flushes them first). queued: the kernel took part, the rest is kept here (the
  // caller's buffers are free again). failed: error is the errno, nothing is kept.
  Sent write(int fd, std::span<const std::byte> head, std::span<const std::byte> body, int& error);

  enum class Flushed { drained, blocked, failed };
  // Pushes the queued bytes to fd. drained: all sent (the queue is emptied); blocked: the
  // kernel is full; failed: error is the errno.
  Flushed flush(int fd, int& error);
  bool has_queued() const { return !queued_.empty(); }
  // Forgets the queued bytes (keeping the memory).
  void drop_queued() {
    queued_.clear();
    queued_start_ = 0;
  }
  // A marker after the frames already queued.
  void queue_marker(std::uint32_t marker);

  // ---- frames for the next connection
  bool pending_full() const { return pending_.size() >= kPendingLimit; }
  bool has_pending() const { return !pending_.empty(); }
  void hold(std::span<const std::byte> head, std::span<const std::byte> body);
  // A connection is made: the held frames go first, after anything queued.
  void queue_pending();

  // ---- reading
  enum class Read { more, drained, end_of_file, failed };
  // Reads what the kernel has on fd. While a frame is placed, its tail is read straight
  // into the sink's room and only the next frame's head into the inbox (so that frame may
  // be placed too). more: a placed frame is complete or a frame's head alone was read
  // (deliver, then read again); drained: nothing more now; end_of_file: the peer closed;
  // failed: error is the errno. place_head: the sink's FrameSink::placement_head().
  Read read(int fd, std::size_t place_head, int& error);
  // Hands pid's complete frames to sink, at most max_frames; out_of_budget is set when
  // frames were left for a later call.
  std::size_t deliver(int pid, FrameSink& sink, std::size_t max_frames, std::size_t place_head, StreamEvents& events,
                      bool& out_of_budget);
  // Reads whatever the kernel still holds on fd into the inbox (a connection being lost).
  void drain(int fd);

  bool has_unread() const { return !inbox_.empty(); }
  bool placing_frame() const { return !placing_.empty(); }
  // Nothing queued either way: a connection that may be closed first.
  bool idle() const { return queued_.empty() && inbox_.empty() && placing_.empty(); }

  // ---- ends
  // The connection closed in order: frees the inbox and the queue.
  void release_connection();
  // The link is lost: a frame cut short is never delivered, nothing queued or held is sent.
  void cut();

 private:
  std::size_t bulk_read(std::size_t place_head) const;
  void start_placing(int pid, FrameSink& sink, std::uint32_t length, std::size_t place_head);

  ByteBuffer inbox_;  // bytes read, not yet handed out as frames
  // A large frame being read straight into memory its sink named (FrameSink::place_frame):
  // the room for its tail, how much of it has arrived, and its head.
  std::span<std::byte> placing_;
  std::size_t placed_ = 0;
  std::vector<std::byte> placing_head_;
  bool bulk_ = false;              // the last frame was large: read only through the next one's head first
  std::vector<std::byte> queued_;  // bytes for the connection the kernel did not take yet
  std::size_t queued_start_ = 0;
  std::vector<std::byte> pending_;  // frames for the next connection
};

}  // namespace bsp::transport::tcp
