// transport/xdp/xsk_socket.h: one AF_XDP socket and its UMEM: a region of frames shared
// with the kernel, some lent to the kernel for receiving (the fill ring), the others
// kept for sending. Received frames are read in place and their buffers given back
// to the fill ring at once; sent frames are copied into a free buffer, queued on the TX
// ring, and their buffers come back through the completion ring.
#pragma once

#include <xdp/xsk.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace bsp::transport::xdp {

struct XskOptions {
  std::string interface;
  int queue = 0;
  std::uint32_t rx_frames = 8192;  // UMEM buffers lent to the kernel for receiving (a power of two)
  std::uint32_t tx_frames = 4096;  // UMEM buffers for sending (a power of two)
  std::string copy = "auto";       // auto (zero-copy where the driver can), zerocopy, copy
  int busy_poll_us = 20;           // SO_BUSY_POLL; 0: no busy polling
};

class XskSocket {
 public:
  static constexpr std::uint32_t kFrameSize = XSK_UMEM__DEFAULT_FRAME_SIZE;
  // The largest Ethernet frame (header included) a buffer holds.
  static constexpr std::size_t kLargestFrame = kFrameSize - 256;  // XDP_PACKET_HEADROOM

  // Throws std::runtime_error naming the interface, the queue and the error.
  explicit XskSocket(const XskOptions& options);
  ~XskSocket();
  XskSocket(const XskSocket&) = delete;
  XskSocket& operator=(const XskSocket&) = delete;

  int fd() const;
  // Puts this socket into an XSKMAP under its queue.
  void register_in(int socket_map_fd);
  bool zero_copy() const { return zero_copy_; }
  bool busy_polling() const { return busy_polling_; }

  // Sending: a buffer for one frame (empty: none free now), then queue it with its length.
  std::span<std::byte> reserve();
  void queue(std::size_t length);
  // Asks the kernel to send what is queued (a system call only where it must be woken).
  // Returns 0 or the errno of a failed wake-up.
  int kick();
  bool has_unsent() const;

  // Receiving: frames arrived (Ethernet header included), valid until release().
  std::size_t peek(std::size_t most);
  std::span<const std::byte> frame(std::size_t index) const;
  void release(std::size_t count);
  // True when frames wait in the RX ring (reads the ring: no system call).
  bool has_received();
  // Lets the kernel (or its busy-polling loop) fill the ring: a non-blocking recvfrom.
  void wake_receiver();

 private:
  void reclaim();

  XskOptions options_;
  void* area_ = nullptr;
  std::size_t area_size_ = 0;
  struct xsk_umem* umem_ = nullptr;
  struct xsk_socket* xsk_ = nullptr;
  struct xsk_ring_prod fill_ {};
  struct xsk_ring_cons completion_ {};
  struct xsk_ring_cons rx_ {};
  struct xsk_ring_prod tx_ {};
  std::vector<std::uint64_t> free_tx_;
  std::uint64_t reserved_ = 0;
  std::uint32_t rx_index_ = 0;
  std::size_t rx_count_ = 0;
  bool zero_copy_ = false;
  bool busy_polling_ = false;
};

}  // namespace bsp::transport::xdp
