// transport/nic/socket_reader.h: receiving nic frames by recvmmsg instead of a ring, so a
// large frame's payload can be read straight to where the layer above will keep it
// (FrameSink datagram placement, one frame per datagram, several frames per system
// call). The kernel then copies each frame once, in the receiver's system call, where a
// receive ring costs a copy into the ring on the sender's CPU (loopback delivers in the
// sender's softirq) and another out of it in the receiver. Every frame's length is
// checked before use: runts (no more than an Ethernet header) and frames longer than the
// MTU (cut short by the kernel) are dropped and counted.
#pragma once

#include <sys/socket.h>
#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "transport/nic/packet_socket.h"
#include "transport/transport.h"

namespace bsp::transport::nic {

class SocketReader {
 public:
  // Frames of up to mtu bytes after the Ethernet header. sender(ethernet_header) names the
  // pid a frame claims to come from (-1: cannot tell); only placement uses it (the sink
  // then checks the claim against the frame's authenticated source).
  SocketReader(int fd, std::size_t mtu, std::function<int(std::span<const std::byte>)> sender);

  // Delivers up to max_frames frames (after their Ethernet headers) without blocking;
  // with place, each one read while the sink offers room goes straight there.
  std::size_t receive(FrameSink& sink, std::size_t max_frames, bool place);

  // Frames dropped for their length: at most an Ethernet header, or longer than the MTU.
  std::uint64_t rejected() const { return rejected_; }
  // Frames read with their payload placed where the sink asked.
  std::uint64_t placed() const { return placed_; }

 private:
  static constexpr std::size_t kBatch = 32;
  // Frames one placed recvmmsg reads, each scattered into its own part of the sink's room.
  static constexpr std::size_t kPlacedPerCall = 16;
  // Reads up to `count` frames by one recvmmsg, frame i's payload at room + i × (mtu −
  // head); returns frames delivered (0: none waiting, or all dropped), and sets drained
  // when the socket had fewer than asked.
  std::size_t receive_placed(FrameSink& sink, std::span<std::byte> room, std::size_t head, std::size_t count,
                             bool& drained);
  // A frame of `length` bytes (Ethernet header included) as received: whether its length
  // may be used (usable_length), and the same with a refused one counted (length_ok).
  bool usable_length(std::size_t length, int flags) const;
  bool length_ok(std::size_t length, int flags);

  int fd_;
  std::size_t mtu_;
  std::size_t slot_;  // Ethernet header + MTU + 1: a longer frame shows as truncated
  std::function<int(std::span<const std::byte>)> sender_;
  std::unique_ptr<std::byte[]> storage_;  // kBatch slots
  iovec iov_[3 * kBatch]{};
  mmsghdr messages_[kBatch]{};
  FrameSink::PlacedFrame placed_frames_[kPlacedPerCall]{};
  std::vector<std::byte> heads_;  // per placed frame: Ethernet header + the sink's head
  std::uint64_t rejected_ = 0, placed_ = 0;
};

}  // namespace bsp::transport::nic
