// transport/xdp/xdp_transport.cc: the xdp transport: AF_XDP socket + steering program.
#include "transport/xdp/xdp_transport.h"

#include <fmt/format.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstring>
#include <optional>
#include <stdexcept>

#include "transport/file_descriptor.h"
#include "transport/hybrid_transport.h"
#include "transport/nic/nic_address.h"
#include "transport/nic/packet_socket.h"
#include "transport/nic/peer_headers.h"
#include "transport/option_spec.h"
#include "transport/registry.h"
#include "transport/shared_options.h"
#include "transport/send_errors.h"
#include "transport/xdp/steer_program.h"
#include "transport/xdp/xsk_socket.h"

namespace bsp::transport {
namespace {

using nic::kEthernetHeader;

constexpr int kDefaultSegmentCheckMs = 5000;
constexpr std::size_t kKickBatch = 64;
constexpr std::size_t kHostRxBytes = 512u << 20;
constexpr std::size_t kMostRxBytes = 32u << 20;
constexpr std::size_t kLeastRxBytes = 2u << 20;
constexpr std::uint32_t kTxFrames = 4096;  // frames queued before the kernel is woken anyway

// The interface's driver ("veth", "ice", ...) as ethtool names it; "" if it does not say.
std::string interface_driver(const std::string& name) {
  FileDescriptor probe(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (probe.get() < 0 || name.size() >= IFNAMSIZ) return "";
  ethtool_drvinfo info{};
  info.cmd = ETHTOOL_GDRVINFO;
  ifreq request{};
  std::memcpy(request.ifr_name, name.data(), name.size());
  request.ifr_data = reinterpret_cast<char*>(&info);
  if (::ioctl(probe.get(), SIOCETHTOOL, &request) != 0) return "";
  return std::string(info.driver, ::strnlen(info.driver, sizeof info.driver));
}

// What xdp reads from TransportConfig::options (shown by bsprun --help, checked there).
const std::vector<TransportOption>& xdp_options() {
  static const std::vector<TransportOption> options = {
      shared_options::iface(),
      shared_options::host(),
      shared_options::mtu(),
      shared_options::connect_timeout_ms(),
      one_of_option("xdp-mode", "auto",
                    "where xdp's XDP program runs: native (in the driver), skb (generic, after the kernel built a "
                    "packet), or auto (native where the driver takes it, else skb; skb on veth, faster there)",
                    {"native", "skb", "auto"}),
      one_of_option("xdp-copy", "auto",
                    "how xdp's AF_XDP socket shares frames with the driver: zerocopy, copy, or auto (zero-copy where "
                    "the driver can; --stats says which)",
                    {"zerocopy", "copy", "auto"}),
      number_option("xdp-queue", "0", "the interface queue xdp's AF_XDP socket binds to (0 to 1023)", 0, 1023),
      number_option("umem-frames", "by p",
                    "4 KiB buffers in xdp's UMEM, half for receiving and half for sending, a power of two (64 to "
                    "262144; default 8192 receiving as nic's 32 MiB ring, less beyond p = 16, and 4096 sending)",
                    64, 262144),
      number_option("busy-poll-us", "20",
                    "xdp: microseconds the kernel busy-polls the driver's queue per wait (SO_BUSY_POLL with "
                    "SO_PREFER_BUSY_POLL, where the kernel offers them); 0: no busy polling (0 to 1000)",
                    0, 1000),
  };
  return options;
}

class XdpTransport final : public Transport {
 public:
  explicit XdpTransport(const TransportConfig& config) : config_(config) {
    TransportOptions options("xdp", config.options, xdp_options());
    std::string name = options.text("iface").value_or(nic::interface_for_address(options.text("host", "127.0.0.1")));
    interface_ = nic::find_interface(name);
    loopback_ = nic::is_loopback(interface_);
    std::size_t link_mtu = interface_.mtu > 0 ? static_cast<std::size_t>(interface_.mtu) : 1500;
    std::size_t largest = std::min(link_mtu, xdp::XskSocket::kLargestFrame - kEthernetHeader);
    std::optional<long> mtu = options.number("mtu");
    mtu_ = mtu ? static_cast<std::size_t>(*mtu) : largest;
    if (mtu_ > largest) {
      throw std::runtime_error(
          fmt::format("xdp transport: mtu {} exceeds {} (the MTU of {}, or a UMEM buffer)", mtu_, largest, name));
    }
    segment_check_ms_ = static_cast<int>(options.number("connect-timeout-ms", kDefaultSegmentCheckMs));
    if (segment_check_ms_ <= 0) {
      throw std::runtime_error(fmt::format("xdp transport: connect_timeout_ms={} must be positive", segment_check_ms_));
    }
    socket_options_.interface = name;
    socket_options_.queue = static_cast<int>(options.number("xdp-queue", 0));
    // Receive buffers as nic's receive ring: 32 MiB up to p = 16, then 512 MiB per host
    // shared out, at least 2 MiB (a power of two of 4 KiB buffers); send buffers 16 MiB.
    // umem_frames sets the whole UMEM instead, half each way.
    std::size_t rx_bytes = std::clamp(kHostRxBytes / static_cast<std::size_t>(std::max(config.nprocs, 1)),
                                      kLeastRxBytes, kMostRxBytes);
    socket_options_.rx_frames = std::bit_floor(static_cast<std::uint32_t>(rx_bytes / xdp::XskSocket::kFrameSize));
    socket_options_.tx_frames = kTxFrames;
    if (std::optional<long> umem_frames = options.number("umem-frames")) {
      std::uint32_t frames = static_cast<std::uint32_t>(*umem_frames);
      socket_options_.rx_frames = socket_options_.tx_frames = frames / 2;
    }
    socket_options_.copy = options.text("xdp-copy", "auto");
    std::optional<long> busy_poll_us = options.number("busy-poll-us");
    if (busy_poll_us) socket_options_.busy_poll_us = static_cast<int>(*busy_poll_us);
    mode_ = options.text("xdp-mode", "auto");
    // On veth, whose AF_XDP sockets only copy, generic XDP beat veth's native XDP (which
    // first queues each frame for veth's own NAPI poll) in the interleaved runs of
    // bench/xdp_table.sh, and busy polling cost more than it saved: generic XDP leaves
    // veth without a NAPI instance for it to poll, so it only kept the waiting process
    // on the CPU its peer needed. auto takes skb there, without busy polling unless asked.
    if (mode_ == "auto" && interface_driver(name) == "veth") {
      mode_ = "skb";
      mode_note_ = "(auto:veth)";
      if (!busy_poll_us) socket_options_.busy_poll_us = 0;
    }
  }

  std::string_view name() const override { return "xdp"; }
  Capabilities capabilities() const override {
    Capabilities capabilities{mtu_, false};
    // With busy polling, ready() runs the driver's receive queue itself (a non-blocking
    // recvfrom) instead of waiting for its softirq: worth a few polls without yielding
    // first, as over shm (the spin policy still spins not at all on crowded cores). On
    // two emulated hosts this took the 4-byte round trip from 20.0 to 7.5 us; busy
    // polling alone, or polling without it, left it at 20.
    capabilities.poll_without_yielding = socket_options_.busy_poll_us > 0;  // asked before connect()
    return capabilities;
  }

  std::string local_address() override {
    return nic::format_address({interface_.name, interface_.mac, nic::this_host_name()});
  }

  void connect(const std::vector<std::string>& addresses) override {
    open();
    headers_ = nic::connect_peers("xdp transport", config_, interface_, addresses,
                                  std::chrono::milliseconds(segment_check_ms_));
  }

  SendStatus send(int peer, std::span<const std::byte> frame) override {
    std::span<std::byte> buffer = socket_->reserve();
    if (buffer.empty()) {
      kick();
      buffer = socket_->reserve();
      if (buffer.empty()) return SendStatus::busy;
    }
    std::memcpy(buffer.data(), headers_[static_cast<std::size_t>(peer)].data(), kEthernetHeader);
    std::memcpy(buffer.data() + kEthernetHeader, frame.data(), frame.size());
    socket_->queue(kEthernetHeader + frame.size());
    if (++unkicked_ >= kKickBatch) kick();
    return SendStatus::sent;
  }

  SendStatus send_gathered(int peer, std::span<const std::byte> head, std::span<const std::byte> body) override {
    std::span<std::byte> buffer = socket_->reserve();
    if (buffer.empty()) {
      kick();
      buffer = socket_->reserve();
      if (buffer.empty()) return SendStatus::busy;
    }
    std::memcpy(buffer.data(), headers_[static_cast<std::size_t>(peer)].data(), kEthernetHeader);
    std::memcpy(buffer.data() + kEthernetHeader, head.data(), head.size());
    if (!body.empty()) std::memcpy(buffer.data() + kEthernetHeader + head.size(), body.data(), body.size());
    socket_->queue(kEthernetHeader + head.size() + body.size());
    if (++unkicked_ >= kKickBatch) kick();
    return SendStatus::sent;
  }

  std::size_t receive(FrameSink& sink, std::size_t max_frames) override {
    if (!socket_) return 0;
    if (unkicked_ > 0 || socket_->has_unsent()) kick();  // never sit on frames while waiting
    if (send_error_ != 0 && permanent_send_error(send_error_) && !reported_down_) {
      reported_down_ = true;
      for (int peer = 0; peer < static_cast<int>(headers_.size()); ++peer) {
        if (peer != config_.pid) {
          sink.on_peer_lost(peer, fmt::format("xdp transport: sending on {} failed: {}", interface_.name,
                                              std::strerror(send_error_)));
        }
      }
    }
    std::size_t delivered = 0;
    while (delivered < max_frames) {
      std::size_t count = socket_->peek(std::min<std::size_t>(max_frames - delivered, 64));
      if (count == 0) break;
      for (std::size_t i = 0; i < count; ++i) {
        std::span<const std::byte> frame = socket_->frame(i);
        if (frame.size() > kEthernetHeader) sink.on_frame(-1, frame.subspan(kEthernetHeader));
      }
      socket_->release(count);
      delivered += count;
    }
    return delivered;
  }

  bool flush() override {
    if (!socket_) return true;
    kick();
    return !socket_->has_unsent();
  }

  int wait_fd() const override { return socket_ ? socket_->fd() : -1; }

  bool ready() override {
    if (!socket_) return false;
    if (socket_->has_received()) return true;
    if (!socket_->busy_polling()) return false;
    socket_->wake_receiver();  // busy-polls the driver's queue where the kernel can
    return socket_->has_received();
  }

  std::string stats() const {
    if (!socket_) return {};
    return fmt::format(" xdp:{},{}{},{},{}", interface_.name, program_->mode(), mode_note_,
                       socket_->zero_copy() ? "zerocopy" : "copy",
                       socket_->busy_polling() ? "busy_poll" : "no_busy_poll");
  }

 private:
  // The program and the socket are set up here, not in the constructor: a hybrid
  // (shm+xdp) whose peers are all on this host never connects its network part, so its
  // processes do not contend for the interface's one XDP hook and queue. The program
  // first (it passes everything until steer()), then the socket, which goes into the
  // program's map before any frame is steered; all before the segment check, so a peer
  // that has heard our probe finds our socket bound.
  void open() {
    program_ = std::make_unique<xdp::SteerProgram>(interface_, mode_);
    socket_ = std::make_unique<xdp::XskSocket>(socket_options_);
    socket_->register_in(program_->socket_map_fd());
    program_->steer({nic::data_ether_type(loopback_, config_.pid), interface_.mac, config_.receive_filter});
  }

  void kick() {
    unkicked_ = 0;
    if (int error = socket_->kick(); error != 0) send_error_ = error;
  }

  TransportConfig config_;
  nic::Interface interface_;
  bool loopback_ = false;
  std::size_t mtu_ = 1500;
  int segment_check_ms_ = kDefaultSegmentCheckMs;
  xdp::XskOptions socket_options_;
  std::string mode_;
  std::string mode_note_;                       // why auto chose the mode, for --stats
  std::unique_ptr<xdp::SteerProgram> program_;  // declared before the socket: outlives it
  std::unique_ptr<xdp::XskSocket> socket_;
  std::vector<nic::EthernetHeader> headers_;
  std::size_t unkicked_ = 0;
  int send_error_ = 0;
  bool reported_down_ = false;
};

const TransportRegistration kRegistration{"xdp", make_xdp_transport, xdp_options()};

}  // namespace

std::unique_ptr<Transport> make_xdp_transport(const TransportConfig& config) {
  return std::make_unique<XdpTransport>(config);
}

std::string xdp_stats(const Transport& transport) {
  for (const Transport* layer = &transport; layer != nullptr; layer = layer->wrapped()) {
    if (const auto* xdp = dynamic_cast<const XdpTransport*>(layer)) return xdp->stats();
  }
  return {};
}

}  // namespace bsp::transport
