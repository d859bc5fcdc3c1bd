// transport/nic/socket_reader.cc: recvmmsg batches, either into the reader's own slots or
// each frame scattered to its part of the sink's room.
#include "transport/nic/socket_reader.h"

#include <algorithm>
#include <cerrno>

#include "transport/room_layout.h"

namespace bsp::transport::nic {
namespace {

// While the sink may place, few frames per batch: it learns a bulk transfer has begun from
// its first frames, and what a batch read before that is copied.
constexpr std::size_t kPlacingBatch = 4;

int receive_messages(int fd, mmsghdr* messages, std::size_t count) {
  int got;
  do {
    got = ::recvmmsg(fd, messages, static_cast<unsigned>(count), MSG_DONTWAIT, nullptr);
  } while (got < 0 && errno == EINTR);
  return got;
}

}  // namespace

SocketReader::SocketReader(int fd, std::size_t mtu, std::function<int(std::span<const std::byte>)> sender)
    : fd_(fd),
      mtu_(mtu),
      slot_(kEthernetHeader + mtu + 1),
      sender_(std::move(sender)),
      storage_(new std::byte[kBatch * (kEthernetHeader + mtu + 1)]) {}

bool SocketReader::usable_length(std::size_t length, int flags) const {
  return (flags & MSG_TRUNC) == 0 && length > kEthernetHeader && length <= kEthernetHeader + mtu_;
}

bool SocketReader::length_ok(std::size_t length, int flags) {
  if (usable_length(length, flags)) return true;
  ++rejected_;
  return false;
}

std::size_t SocketReader::receive(FrameSink& sink, std::size_t max_frames, bool place) {
  const std::size_t head = place ? sink.placement_head() : 0;
  const bool placing = head > 0 && head < mtu_;
  std::size_t delivered = 0;
  while (delivered < max_frames) {
    if (placing) {
      const std::size_t count = std::min(kPlacedPerCall, max_frames - delivered);
      FrameSink::DatagramRoom offer = sink.datagram_room(mtu_, count);
      if (!offer.room.empty() && offer.room.size() < count * (mtu_ - head)) {
        sink.on_datagram_placed(kNotAMember, {});  // not the room asked for: read as usual
      } else if (!offer.room.empty()) {
        bool drained = false;
        delivered += receive_placed(sink, offer.room, head, count, drained);
        if (drained) break;
        continue;
      }
    }
    std::size_t count = std::min(placing ? kPlacingBatch : kBatch, max_frames - delivered);
    for (std::size_t i = 0; i < count; ++i) {
      iov_[i] = iovec{storage_.get() + i * slot_, slot_};
      messages_[i] = mmsghdr{};
      messages_[i].msg_hdr.msg_iov = &iov_[i];
      messages_[i].msg_hdr.msg_iovlen = 1;
    }
    int got = receive_messages(fd_, messages_, count);
    if (got <= 0) break;
    for (int i = 0; i < got; ++i) {
      const std::size_t length = messages_[i].msg_len;
      if (!length_ok(length, messages_[i].msg_hdr.msg_flags)) continue;
      sink.on_frame(-1, std::span<const std::byte>(storage_.get() + static_cast<std::size_t>(i) * slot_, length)
                            .subspan(kEthernetHeader));
      ++delivered;
    }
    if (static_cast<std::size_t>(got) < count) break;  // drained
  }
  return delivered;
}

std::size_t SocketReader::receive_placed(FrameSink& sink, std::span<std::byte> room, std::size_t head,
                                         std::size_t count, bool& drained) {
  // Frame i: [Ethernet header + the sink's head into heads_] [the rest, up to the MTU, at
  // room + i × body] [one byte more, the last of slot i: a longer frame shows as one, or
  // as truncated]. A frame that is not placed is put back together in slot i, the tail
  // byte already where it belongs.
  const std::size_t heading = kEthernetHeader + head;
  if (heads_.size() < count * heading) heads_.resize(count * heading);
  const RoomLayout layout{heads_.data(), heading, room, mtu_ - head};
  for (std::size_t i = 0; i < count; ++i) {
    iovec* parts = &iov_[3 * i];
    parts[0] = layout.head_piece(i);
    parts[1] = layout.body_piece(i);
    parts[2] = iovec{storage_.get() + i * slot_ + slot_ - 1, 1};
    messages_[i] = mmsghdr{};
    messages_[i].msg_hdr.msg_iov = parts;
    messages_[i].msg_hdr.msg_iovlen = 3;
  }
  const int got = receive_messages(fd_, messages_, count);
  if (got <= 0) {
    drained = true;
    sink.on_datagram_placed(kNotAMember, {});
    return 0;
  }
  const auto arrived = static_cast<std::size_t>(got);
  drained = arrived < count;
  const auto ethernet = [&](std::size_t i) { return layout.link_header(i, kEthernetHeader); };
  const int from = sender_ ? sender_(ethernet(0)) : -1;
  // The leading frames of a usable length from the first one's sender go to the sink in
  // place; the others are copied out of the room first (the sink may write there once it
  // has the placed ones), then delivered as usual.
  std::size_t shaped = 0;
  for (; shaped < arrived; ++shaped) {
    const std::size_t length = messages_[shaped].msg_len;
    if (!usable_length(length, messages_[shaped].msg_hdr.msg_flags) ||
        (shaped > 0 && sender_ && sender_(ethernet(shaped)) != from)) {
      break;
    }
    placed_frames_[shaped] = layout.placed(shaped, length - kEthernetHeader, kEthernetHeader);
  }
  for (std::size_t i = shaped; i < arrived; ++i) {
    gather(std::span<const iovec>(&iov_[3 * i], 2), messages_[i].msg_len, storage_.get() + i * slot_);
  }
  sink.on_datagram_placed(from, std::span<const FrameSink::PlacedFrame>(placed_frames_, shaped));
  placed_ += shaped;
  std::size_t delivered = shaped;
  for (std::size_t i = shaped; i < arrived; ++i) {
    const std::size_t length = messages_[i].msg_len;
    if (!length_ok(length, messages_[i].msg_hdr.msg_flags)) continue;
    sink.on_frame(-1, std::span<const std::byte>(storage_.get() + i * slot_, length).subspan(kEthernetHeader));
    ++delivered;
  }
  return delivered;
}

}  // namespace bsp::transport::nic
