// transport/nic/gather_sender.cc: sendmmsg of [Ethernet header][frame] gathers.
#include "transport/nic/gather_sender.h"

#include <cerrno>
#include <cstring>

namespace bsp::transport::nic {

GatherSender::GatherSender(int fd, std::vector<EthernetHeader> headers) : fd_(fd), headers_(std::move(headers)) {}

bool GatherSender::stage(int peer, std::span<const std::byte> frame) {
  if (batch_full() && !send_staged()) return false;
  if (copies_.size() < kMaxBatch) copies_.resize(kMaxBatch);
  std::vector<std::byte>& copy = copies_[staged_.size()];
  copy.assign(frame.begin(), frame.end());
  staged_.push_back(OutFrame{peer, copy});
  return true;
}

bool GatherSender::send_staged() {
  if (staged_.empty()) return true;
  std::vector<OutFrame> pending;
  pending.swap(staged_);
  std::size_t sent = send(pending);
  // What the kernel refused stays staged, in order (its copies move to the front).
  for (std::size_t i = sent; i < pending.size(); ++i) {
    std::swap(copies_[i - sent], copies_[i]);
    staged_.push_back(OutFrame{pending[i].peer, copies_[i - sent]});
  }
  return staged_.empty();
}

std::size_t GatherSender::send(std::span<const OutFrame> frames) {
  if (!staged_.empty() && !send_staged()) return 0;  // keep the order
  std::size_t sent = 0;
  last_error_ = 0;
  while (sent < frames.size()) {
    std::size_t batch = std::min(frames.size() - sent, kMaxBatch);
    for (std::size_t i = 0; i < batch; ++i) {
      const OutFrame& frame = frames[sent + i];
      EthernetHeader& header = headers_[static_cast<std::size_t>(frame.peer)];
      parts_[2 * i] = {header.data(), header.size()};
      parts_[2 * i + 1] = {const_cast<std::byte*>(frame.bytes.data()), frame.bytes.size()};
      messages_[i] = {};
      messages_[i].msg_hdr.msg_iov = &parts_[2 * i];
      messages_[i].msg_hdr.msg_iovlen = 2;
    }
    int went = ::sendmmsg(fd_, messages_.data(), static_cast<unsigned>(batch), MSG_DONTWAIT);
    if (went < 0) {
      if (errno == EINTR) continue;
      last_error_ = errno;
      return sent;
    }
    sent += static_cast<std::size_t>(went);
    if (static_cast<std::size_t>(went) < batch) {
      // sendmmsg stops at the first message refused and reports only the ones before it;
      // ask again for the refused one to learn why (it is sent if the cause has passed).
      int again = ::sendmmsg(fd_, &messages_[static_cast<std::size_t>(went)], 1, MSG_DONTWAIT);
      if (again == 1) {
        ++sent;
        continue;
      }
      last_error_ = again < 0 ? errno : EAGAIN;
      return sent;
    }
  }
  return sent;
}

}  // namespace bsp::transport::nic
