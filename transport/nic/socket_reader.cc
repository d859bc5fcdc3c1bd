// transport/nic/socket_reader.cc: recvmmsg batches, and one frame read scattered to the
// sink's room.
#include "transport/nic/socket_reader.h"

#include <cerrno>

namespace bsp::transport::nic {
namespace {

// While the sink may place, few frames per batch: it learns a bulk transfer has begun from
// its first frames, and what a batch read before that is copied.
constexpr std::size_t kPlacingBatch = 4;

}  // namespace

SocketReader::SocketReader(int fd, std::size_t mtu, std::function<int(std::span<const std::byte>)> sender)
    : fd_(fd),
      mtu_(mtu),
      slot_(kEthernetHeader + mtu + 1),
      sender_(std::move(sender)),
      storage_(new std::byte[kBatch * (kEthernetHeader + mtu + 1)]) {}

bool SocketReader::length_ok(std::size_t length, int flags) {
  if ((flags & MSG_TRUNC) != 0 || length <= kEthernetHeader || length > kEthernetHeader + mtu_) {
    ++rejected_;
    return false;
  }
  return true;
}

std::size_t SocketReader::receive(FrameSink& sink, std::size_t max_frames, bool place) {
  const std::size_t head = place ? sink.placement_head() : 0;
  const bool placing = head > 0 && head < mtu_;
  std::size_t delivered = 0;
  while (delivered < max_frames) {
    if (placing) {
      FrameSink::DatagramRoom offer = sink.datagram_room(mtu_, 1);
      if (!offer.room.empty() && offer.room.size() < mtu_ - head) {
        sink.on_datagram_placed(kNotAMember, {});  // not the room asked for: read as usual
      } else if (!offer.room.empty()) {
        bool drained = false;
        delivered += receive_placed(sink, offer, head, drained);
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
    int got;
    do {
      got = ::recvmmsg(fd_, messages_, static_cast<unsigned>(count), MSG_DONTWAIT, nullptr);
    } while (got < 0 && errno == EINTR);
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

std::size_t SocketReader::receive_placed(FrameSink& sink, const FrameSink::DatagramRoom& offer, std::size_t head,
                                         bool& drained) {
  // [Ethernet header + the sink's head] [the rest, up to the MTU, into the room] [one
  // byte more: a longer frame shows as one, or as truncated]
  const std::size_t body = mtu_ - head;
  head_.resize(kEthernetHeader + head);
  iovec parts[3] = {{head_.data(), head_.size()}, {offer.room.data(), body}, {storage_.get(), 1}};
  msghdr message{};
  message.msg_iov = parts;
  message.msg_iovlen = 3;
  ssize_t got;
  do {
    got = ::recvmsg(fd_, &message, MSG_DONTWAIT);
  } while (got < 0 && errno == EINTR);
  if (got < 0) {
    drained = true;
    sink.on_datagram_placed(kNotAMember, {});
    return 0;
  }
  const auto length = static_cast<std::size_t>(got);
  if (!length_ok(length, message.msg_flags)) {  // the room's bytes are given up unread
    sink.on_datagram_placed(kNotAMember, {});
    return 0;
  }
  const int from = sender_ ? sender_(std::span<const std::byte>(head_.data(), kEthernetHeader)) : -1;
  const std::size_t frame = length - kEthernetHeader;
  const std::span<const std::byte> heading(head_.data() + kEthernetHeader, std::min(frame, head));
  if (frame <= head) {  // all of it in head_: an ordinary frame
    sink.on_datagram_placed(from, {});
    sink.on_frame(-1, heading);
    return 1;
  }
  const FrameSink::PlacedFrame placed{heading, offer.room.first(frame - head)};
  sink.on_datagram_placed(from, std::span<const FrameSink::PlacedFrame>(&placed, 1));
  ++placed_;
  return 1;
}

}  // namespace bsp::transport::nic
