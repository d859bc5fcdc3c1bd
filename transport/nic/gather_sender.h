// transport/nic/gather_sender.h: sends frames on a packet socket straight from the
// caller's buffers: one sendmmsg() per batch, each message gathering the peer's 14-byte
// Ethernet header and the frame (two iovecs), so no byte is copied in user space. On a
// virtual interface (lo, veth) this also spares the kernel a copy: a transmit ring's
// frames are zero-copy pages that the kernel copies once more before it may deliver them
// (skb_copy_ubufs), while a sent message is copied into the packet once.
#pragma once

#include <sys/socket.h>
#include <sys/uio.h>

#include <array>
#include <cstddef>
#include <span>
#include <vector>

#include "transport/nic/packet_socket.h"
#include "transport/transport.h"

namespace bsp::transport::nic {

class GatherSender {
 public:
  static constexpr std::size_t kMaxBatch = 64;

  // headers[pid]: the Ethernet header of a frame to pid (ethernet_headers()).
  GatherSender(int fd, std::vector<EthernetHeader> headers);

  // Sends frames from the front until the kernel refuses one; returns how many went.
  // last_error() then says why (0 when all went). Copies staged earlier go first.
  std::size_t send(std::span<const OutFrame> frames);
  int last_error() const { return last_error_; }

  // A frame sent alone (Transport::send, whose caller may reuse its buffer at once):
  // copied aside and sent with up to kMaxBatch - 1 others in one system call by
  // send_staged() (the transport calls it at a full batch, flush and receive). False
  // when the copies wait for the kernel already (busy).
  bool stage(int peer, std::span<const std::byte> frame);
  // Sends the staged copies; true when none is left.
  bool send_staged();
  bool has_staged() const { return !staged_.empty(); }
  bool batch_full() const { return staged_.size() >= kMaxBatch; }

 private:
  int fd_;
  std::vector<EthernetHeader> headers_;  // by peer
  std::array<iovec, 2 * kMaxBatch> parts_{};
  std::array<mmsghdr, kMaxBatch> messages_{};
  int last_error_ = 0;
  std::vector<std::vector<std::byte>> copies_;  // kMaxBatch buffers, reused
  std::vector<OutFrame> staged_;                // over copies_, in order
};

}  // namespace bsp::transport::nic
