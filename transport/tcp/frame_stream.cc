// transport/tcp/frame_stream.cc: length-prefixed frames on a tcp stream (see frame_stream.h):
// gathered writes, the queue the kernel did not take, reading in place and placement.
#include "transport/tcp/frame_stream.h"

#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace bsp::transport::tcp {
namespace {

void append(std::vector<std::byte>& queue, std::uint32_t word) {
  const auto* bytes = reinterpret_cast<const std::byte*>(&word);
  queue.insert(queue.end(), bytes, bytes + 4);
}

}  // namespace

FrameStream::Sent FrameStream::write(int fd, std::span<const std::byte> head, std::span<const std::byte> body,
                                     int& error) {
  std::uint32_t length = static_cast<std::uint32_t>(head.size() + body.size());
  iovec parts[3] = {{&length, 4},
                    {const_cast<std::byte*>(head.data()), head.size()},
                    {const_cast<std::byte*>(body.data()), body.size()}};
  msghdr message{};
  message.msg_iov = parts;
  message.msg_iovlen = body.empty() ? 2 : 3;
  // MSG_NOSIGNAL: a peer that is gone is an EPIPE to report, not a SIGPIPE that kills us.
  ssize_t sent = ::sendmsg(fd, &message, MSG_NOSIGNAL | MSG_DONTWAIT);
  if (sent < 0) {
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      error = errno;
      return Sent::failed;
    }
    sent = 0;
  }
  std::size_t total = 4 + length;
  if (static_cast<std::size_t>(sent) >= total) return Sent::whole;
  // Keep the unsent tail; the frame is ours now, the caller may reuse its buffers.
  std::size_t skip = static_cast<std::size_t>(sent);
  for (const iovec& part : parts) {
    const auto* bytes = static_cast<const std::byte*>(part.iov_base);
    std::size_t from = std::min(skip, part.iov_len);
    queued_.insert(queued_.end(), bytes + from, bytes + part.iov_len);
    skip -= from;
  }
  return Sent::queued;
}

FrameStream::Flushed FrameStream::flush(int fd, int& error) {
  while (queued_start_ < queued_.size()) {
    ssize_t sent = ::send(fd, queued_.data() + queued_start_, queued_.size() - queued_start_,
                          MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return Flushed::blocked;
      error = errno;
      return Flushed::failed;
    }
    queued_start_ += static_cast<std::size_t>(sent);
  }
  drop_queued();
  return Flushed::drained;
}

void FrameStream::queue_marker(std::uint32_t marker) { append(queued_, marker); }

void FrameStream::hold(std::span<const std::byte> head, std::span<const std::byte> body) {
  append(pending_, static_cast<std::uint32_t>(head.size() + body.size()));
  pending_.insert(pending_.end(), head.begin(), head.end());
  pending_.insert(pending_.end(), body.begin(), body.end());
}

void FrameStream::queue_pending() {
  if (pending_.empty()) return;
  if (queued_.empty()) {
    queued_.swap(pending_);
  } else {
    queued_.insert(queued_.end(), pending_.begin(), pending_.end());
  }
  pending_.clear();
}

FrameStream::Read FrameStream::read(int fd, std::size_t place_head, int& error) {
  for (;;) {
    const bool placing = !placing_.empty();
    const std::size_t tail = placing ? placing_.size() - placed_ : 0;
    const std::size_t want = placing ? 4 + place_head : bulk_read(place_head);  // bounded: up to a frame's head
    const bool head_only = want != 0;
    std::span<std::byte> room = inbox_.room(head_only ? want : kReadChunk);
    iovec parts[2] = {{placing_.data() + placed_, tail}, {room.data(), head_only ? want : room.size()}};
    msghdr message{};
    message.msg_iov = placing ? parts : parts + 1;
    message.msg_iovlen = placing ? 2 : 1;
    ssize_t got = ::recvmsg(fd, &message, MSG_DONTWAIT);
    if (got > 0) {
      std::size_t into_room = std::min(static_cast<std::size_t>(got), tail);
      placed_ += into_room;
      inbox_.grow(static_cast<std::size_t>(got) - into_room);
      if (placing && placed_ == placing_.size()) return Read::more;
      if (static_cast<std::size_t>(got) < tail + parts[1].iov_len) return Read::drained;
      if (head_only) return Read::more;  // a frame's head alone: deliver() may place the frame, then read on
      continue;
    }
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return Read::drained;
    if (got < 0 && errno == EINTR) continue;
    if (got == 0) return Read::end_of_file;
    error = errno;
    return Read::failed;
  }
}

std::size_t FrameStream::deliver(int pid, FrameSink& sink, std::size_t max_frames, std::size_t place_head,
                                 StreamEvents& events, bool& out_of_budget) {
  std::size_t delivered = 0;
  out_of_budget = false;
  if (!placing_.empty()) {
    if (placed_ < placing_.size()) return 0;  // its tail is still coming
    if (max_frames == 0) {
      out_of_budget = true;
      return 0;
    }
    placing_ = {};
    placed_ = 0;
    sink.on_frame_placed(pid, placing_head_);
    ++delivered;
  }
  while (delivered < max_frames) {
    std::span<const std::byte> available = inbox_.bytes();
    if (available.size() < 4) break;
    std::uint32_t length;
    std::memcpy(&length, available.data(), 4);
    if (length == kByeMark || length == kByeAckMark) {
      inbox_.consume(4);
      if (events.on_marker(pid, length == kByeMark)) inbox_.consume(inbox_.bytes().size());  // nothing after it counts
      break;
    }
    if (length > kTcpMtu) {
      events.on_bad_stream(pid, fmt::format("bad frame length {}", length));
      inbox_.consume(available.size());  // nothing after it can be framed
      break;
    }
    if (available.size() < 4 + length) {
      start_placing(pid, sink, length, place_head);
      break;
    }
    bulk_ = length >= kPlaceFrom && place_head > 0;  // a large frame read whole: place the next one
    sink.on_frame(pid, available.subspan(4, length));
    inbox_.consume(4 + length);
    ++delivered;
  }
  if (delivered >= max_frames && !inbox_.empty()) out_of_budget = true;  // the next receive
  return delivered;
}

void FrameStream::drain(int fd) {
  for (;;) {
    std::span<std::byte> room = inbox_.room(kReadChunk);
    ssize_t got = ::recv(fd, room.data(), room.size(), MSG_DONTWAIT);
    if (got > 0) {
      inbox_.grow(static_cast<std::size_t>(got));
      continue;
    }
    if (got < 0 && errno == EINTR) continue;
    break;
  }
}

void FrameStream::release_connection() {
  inbox_.release();
  std::vector<std::byte>().swap(queued_);
  queued_start_ = 0;
}

void FrameStream::cut() {
  placing_ = {};
  placed_ = 0;
  std::vector<std::byte>().swap(queued_);
  std::vector<std::byte>().swap(pending_);
  queued_start_ = 0;
}

// After a large frame, a peer is likely sending a run of them: read only up to the
// next frame's head (through the rest of the frame in the inbox, if any), so deliver() can
// place that frame before its tail is read. 0: read as much as the kernel has.
std::size_t FrameStream::bulk_read(std::size_t place_head) const {
  if (!bulk_ || place_head == 0) return 0;
  std::span<const std::byte> available = inbox_.bytes();
  std::size_t through = 4 + place_head;  // the head first: deliver() may place the frame
  if (available.size() >= through) {     // here and not placed: through its end and the next head
    std::uint32_t length;
    std::memcpy(&length, available.data(), 4);
    if (length > kTcpMtu) return 0;  // a marker, or a bad length deliver() reports
    through += 4 + length;
  }
  return through > available.size() ? through - available.size() : 0;
}

// The inbox holds the start of a frame of `length` bytes: a large one whose head is
// here goes into the room the sink names, if it names one of the right size; what of its
// tail already arrived is copied there now, the rest is read there by read().
void FrameStream::start_placing(int pid, FrameSink& sink, std::uint32_t length, std::size_t place_head) {
  std::span<const std::byte> available = inbox_.bytes();
  if (place_head == 0 || length < kPlaceFrom || length <= place_head || available.size() < 4 + place_head) return;
  std::span<const std::byte> head = available.subspan(4, place_head);
  std::span<std::byte> room = sink.place_frame(pid, head, length);
  if (room.size() != length - place_head) return;  // none (or a sink's mistake): read it whole
  placing_head_.assign(head.begin(), head.end());
  std::span<const std::byte> arrived = available.subspan(4 + place_head);
  std::memcpy(room.data(), arrived.data(), arrived.size());  // fewer than length - place_head bytes
  placing_ = room;
  placed_ = arrived.size();
  bulk_ = true;
  inbox_.consume(available.size());
}

}  // namespace bsp::transport::tcp
