// transport/xdp/xsk_socket.cc: AF_XDP socket, UMEM and the four rings.
#include "transport/xdp/xsk_socket.h"

#include <fmt/format.h>
#include <linux/if_xdp.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>

namespace bsp::transport::xdp {
namespace {

constexpr auto kBusyQueueWait = std::chrono::seconds(2);

#ifndef SO_PREFER_BUSY_POLL
#define SO_PREFER_BUSY_POLL 69
#endif
#ifndef SO_BUSY_POLL_BUDGET
#define SO_BUSY_POLL_BUDGET 70
#endif

std::string bind_advice(int error, const XskOptions& options) {
  if (error == EBUSY) {
    return fmt::format(
        "queue {} of {} already has an AF_XDP socket (another process on this host and interface): the xdp "
        "transport runs one process per interface queue, so use --transport=shm+xdp (processes of one host "
        "through shared memory) or --transport=nic",
        options.queue, options.interface);
  }
  if (error == EPERM || error == EACCES) {
    return "AF_XDP sockets need root (CAP_NET_RAW and CAP_NET_ADMIN); use --transport=udp, which needs none, "
           "or --transport=nic with CAP_NET_RAW";
  }
  if (error == EAFNOSUPPORT) return "this kernel has no AF_XDP sockets (CONFIG_XDP_SOCKETS); use --transport=nic";
  if (error == EOPNOTSUPP && options.copy == "zerocopy") {
    return fmt::format("the driver of {} has no zero-copy AF_XDP: use --xdp-copy=auto (or copy)", options.interface);
  }
  return "use --transport=nic (raw frames through AF_PACKET) instead";
}

}  // namespace

XskSocket::XskSocket(const XskOptions& options) : options_(options) {
  for (std::uint32_t frames : {options.rx_frames, options.tx_frames}) {
    if (frames < 32 || (frames & (frames - 1)) != 0) {
      throw std::runtime_error(
          fmt::format("xdp transport: {} UMEM buffers for receiving or sending: want a power "
                      "of two, at least 32 (umem-frames: at least 64)",
                      frames));
    }
  }
  const std::uint32_t total = options.rx_frames + options.tx_frames;
  area_size_ = static_cast<std::size_t>(total) * kFrameSize;
  // The kernel pins the pages when the UMEM is registered.
  area_ = ::mmap(nullptr, area_size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (area_ == MAP_FAILED) {
    area_ = nullptr;
    throw std::runtime_error(fmt::format("xdp transport: {} bytes of UMEM: {}", area_size_, std::strerror(errno)));
  }
  const std::uint32_t rx = options.rx_frames, tx = options.tx_frames;
  xsk_umem_config umem_config{};
  umem_config.fill_size = rx;
  umem_config.comp_size = tx;
  umem_config.frame_size = kFrameSize;
  umem_config.frame_headroom = 0;
  if (int error = xsk_umem__create(&umem_, area_, area_size_, &fill_, &completion_, &umem_config); error != 0) {
    ::munmap(area_, area_size_);
    area_ = nullptr;
    throw std::runtime_error(fmt::format("xdp transport: AF_XDP UMEM of {} frames on {}: {}; {}", total,
                                         options.interface, std::strerror(-error), bind_advice(-error, options)));
  }
  std::vector<std::uint16_t> tries;
  if (options.copy == "auto" || options.copy == "zerocopy") tries.push_back(XDP_ZEROCOPY);
  if (options.copy == "auto" || options.copy == "copy") tries.push_back(XDP_COPY);
  if (tries.empty()) {
    throw std::runtime_error(fmt::format("xdp transport: xdp-copy={}: want auto, zerocopy or copy", options.copy));
  }
  int error = 0;
  auto bind = [&] {
    for (std::uint16_t mode : tries) {
      xsk_socket_config config{};
      config.rx_size = rx;
      config.tx_size = tx;
      config.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD;
      config.bind_flags = static_cast<std::uint16_t>(mode | XDP_USE_NEED_WAKEUP);
      error = xsk_socket__create(&xsk_, options.interface.c_str(), static_cast<std::uint32_t>(options.queue), umem_,
                                 &rx_, &tx_, &config);
      if (error == 0) {
        zero_copy_ = mode == XDP_ZEROCOPY;
        return;
      }
      xsk_ = nullptr;
      if (error == -EBUSY || error == -EPERM) return;
    }
  };
  // A socket closed a moment ago (this process's previous job, or one that just ended on
  // this interface) frees its queue only when the kernel's deferred release of its buffer
  // pool has run on a workqueue, later on a busy machine: EBUSY until then. A queue held
  // by a live socket stays busy, and is reported after this bound.
  const auto busy_until = std::chrono::steady_clock::now() + kBusyQueueWait;
  for (auto pause = std::chrono::milliseconds(1);; pause = std::min(pause * 2, std::chrono::milliseconds(50))) {
    bind();
    if (error != -EBUSY || std::chrono::steady_clock::now() >= busy_until) break;
    std::this_thread::sleep_for(pause);
  }
  if (!xsk_) {
    xsk_umem__delete(umem_);
    ::munmap(area_, area_size_);
    area_ = nullptr;
    throw std::runtime_error(fmt::format("xdp transport: AF_XDP socket on {} queue {}: {}; {}", options.interface,
                                         options.queue, std::strerror(-error), bind_advice(-error, options)));
  }
  // The kernel's receive buffers: the first rx of the UMEM.
  std::uint32_t index = 0;
  if (xsk_ring_prod__reserve(&fill_, rx, &index) != rx) throw std::runtime_error("xdp transport: fill ring");
  for (std::uint32_t i = 0; i < rx; ++i) *xsk_ring_prod__fill_addr(&fill_, index + i) = std::uint64_t{i} * kFrameSize;
  xsk_ring_prod__submit(&fill_, rx);
  for (std::uint32_t i = rx; i < total; ++i) free_tx_.push_back(std::uint64_t{i} * kFrameSize);
  if (options.busy_poll_us > 0) {
    int one = 1, budget = 64;
    busy_polling_ = ::setsockopt(fd(), SOL_SOCKET, SO_PREFER_BUSY_POLL, &one, sizeof one) == 0 &&
                    ::setsockopt(fd(), SOL_SOCKET, SO_BUSY_POLL, &options.busy_poll_us, sizeof(int)) == 0 &&
                    ::setsockopt(fd(), SOL_SOCKET, SO_BUSY_POLL_BUDGET, &budget, sizeof budget) == 0;
  }
}

XskSocket::~XskSocket() {
  if (xsk_) xsk_socket__delete(xsk_);
  if (umem_) xsk_umem__delete(umem_);
  if (area_) ::munmap(area_, area_size_);
}

int XskSocket::fd() const { return xsk_socket__fd(xsk_); }

void XskSocket::register_in(int socket_map_fd) {
  if (int error = xsk_socket__update_xskmap(xsk_, socket_map_fd); error != 0) {
    throw std::runtime_error(fmt::format("xdp transport: putting the AF_XDP socket of {} in the XDP program's map: {}",
                                         options_.interface, std::strerror(-error)));
  }
}

void XskSocket::reclaim() {
  std::uint32_t index = 0;
  std::uint32_t done = xsk_ring_cons__peek(&completion_, options_.tx_frames, &index);
  for (std::uint32_t i = 0; i < done; ++i) free_tx_.push_back(*xsk_ring_cons__comp_addr(&completion_, index + i));
  if (done > 0) xsk_ring_cons__release(&completion_, done);
}

std::span<std::byte> XskSocket::reserve() {
  if (free_tx_.empty()) reclaim();
  if (free_tx_.empty()) return {};
  reserved_ = free_tx_.back();
  return {static_cast<std::byte*>(xsk_umem__get_data(area_, reserved_)), kLargestFrame};
}

void XskSocket::queue(std::size_t length) {
  std::uint32_t index = 0;
  // The TX ring has a slot per send buffer: a buffer free means a slot free.
  xsk_ring_prod__reserve(&tx_, 1, &index);
  xdp_desc* desc = xsk_ring_prod__tx_desc(&tx_, index);
  desc->addr = reserved_;
  desc->len = static_cast<std::uint32_t>(length);
  desc->options = 0;
  xsk_ring_prod__submit(&tx_, 1);
  free_tx_.pop_back();
}

bool XskSocket::has_unsent() const { return __atomic_load_n(tx_.consumer, __ATOMIC_ACQUIRE) != *tx_.producer; }

int XskSocket::kick() {
  // Copy mode sends at most a few dozen frames per call (the kernel's TX batch): call
  // again while the ring still holds frames and the kernel took some.
  for (int round = 0; round < 64 && has_unsent(); ++round) {
    if (!xsk_ring_prod__needs_wakeup(&tx_)) break;
    std::uint32_t before = __atomic_load_n(tx_.consumer, __ATOMIC_ACQUIRE);
    if (::sendto(fd(), nullptr, 0, MSG_DONTWAIT, nullptr, 0) < 0) {
      if (errno == EAGAIN || errno == EBUSY || errno == ENOBUFS || errno == EINTR) break;
      return errno;
    }
    if (__atomic_load_n(tx_.consumer, __ATOMIC_ACQUIRE) == before) break;
  }
  reclaim();
  return 0;
}

std::size_t XskSocket::peek(std::size_t most) {
  rx_count_ = xsk_ring_cons__peek(&rx_, static_cast<std::uint32_t>(most), &rx_index_);
  return rx_count_;
}

std::span<const std::byte> XskSocket::frame(std::size_t index) const {
  const xdp_desc* desc = xsk_ring_cons__rx_desc(&rx_, rx_index_ + static_cast<std::uint32_t>(index));
  std::uint64_t addr = xsk_umem__add_offset_to_addr(desc->addr);
  if (addr + desc->len > area_size_) return {};
  return {static_cast<const std::byte*>(xsk_umem__get_data(area_, addr)), desc->len};
}

void XskSocket::release(std::size_t count) {
  std::uint32_t fill_index = 0;
  std::uint32_t n = static_cast<std::uint32_t>(count);
  // The fill ring has a slot per receive buffer: these n were taken from it.
  xsk_ring_prod__reserve(&fill_, n, &fill_index);
  for (std::uint32_t i = 0; i < n; ++i) {
    const xdp_desc* desc = xsk_ring_cons__rx_desc(&rx_, rx_index_ + i);
    std::uint64_t chunk = xsk_umem__extract_addr(desc->addr) & ~std::uint64_t{kFrameSize - 1};
    *xsk_ring_prod__fill_addr(&fill_, fill_index + i) = chunk;
  }
  xsk_ring_prod__submit(&fill_, n);
  xsk_ring_cons__release(&rx_, n);
  rx_count_ = 0;
  if (xsk_ring_prod__needs_wakeup(&fill_)) wake_receiver();
}

bool XskSocket::has_received() { return xsk_cons_nb_avail(&rx_, 1) > 0; }

void XskSocket::wake_receiver() { (void)::recvfrom(fd(), nullptr, 0, MSG_DONTWAIT, nullptr, nullptr); }

}  // namespace bsp::transport::xdp
