// transport/udp/udp_transport.cc: datagram socket transport (see udp_transport.h).
// Peers are known by address after connect(); an arriving datagram's source address
// names its pid (-1 when it is nobody of this job: the layer above counts and drops it).
#include "transport/udp/udp_transport.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <map>
#include <unordered_map>
#include <vector>

#include "transport/file_descriptor.h"
#include "transport/registry.h"
#include "transport/send_errors.h"
#include "transport/socket_buffers.h"

namespace bsp::transport {
namespace {

constexpr std::size_t kDefaultMtu = 1472;           // 1500-byte Ethernet MTU - IP(20) - UDP(8)
constexpr std::size_t kLoopbackMtu = 8192;          // on lo: measured faster (FT W p=4 1.3-1.4x, IS A 1.2x)
constexpr std::size_t kLargestMtu = 65507;          // largest UDP payload over IPv4
constexpr int kDefaultSocketBuffer = 4 * 1024 * 1024;
// Receive side: what every peer may have in flight to us (half the reliable layer's pool
// of 8 KiB frames on loopback, 4 MiB) with room for the kernel's per-datagram overhead.
constexpr int kDefaultReceiveBuffer = 16 * 1024 * 1024;
constexpr std::size_t kBatch = 64;                  // datagrams per sendmmsg/recvmmsg

std::runtime_error system_error(const std::string& what) {
  return std::runtime_error(fmt::format("udp transport: {}: {}", what, std::strerror(errno)));
}

std::uint64_t address_key(const sockaddr_in& address) {
  return (static_cast<std::uint64_t>(address.sin_addr.s_addr) << 16) | address.sin_port;
}

sockaddr_in parse_address(const std::string& text) {
  auto colon = text.rfind(':');
  sockaddr_in address{};
  address.sin_family = AF_INET;
  if (colon == std::string::npos ||
      ::inet_pton(AF_INET, text.substr(0, colon).c_str(), &address.sin_addr) != 1) {
    throw std::runtime_error(fmt::format("udp transport: bad peer address '{}' (want ip:port)", text));
  }
  int port = std::stoi(text.substr(colon + 1));
  if (port <= 0 || port > 65535) throw std::runtime_error(fmt::format("udp transport: bad port in '{}'", text));
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  return address;
}

// "20us", "1ms", "500ns", "20" (microseconds) -> nanoseconds.
std::chrono::nanoseconds parse_pace(const std::string& text) {
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  std::string unit = text.substr(used);
  double scale = unit.empty() || unit == "us" ? 1e3 : unit == "ns" ? 1.0 : unit == "ms" ? 1e6 : -1;
  if (used == 0 || scale < 0 || value < 0) {
    throw std::runtime_error(fmt::format("udp transport: bad pace '{}' (want e.g. 20us, 1ms, 500ns)", text));
  }
  return std::chrono::nanoseconds(static_cast<std::int64_t>(value * scale));
}

class UdpTransport final : public Transport {
 public:
  explicit UdpTransport(const TransportConfig& config) : config_(config) {
    auto option = [&](const char* key, const char* fallback) {
      auto found = config.options.find(key);
      return found == config.options.end() || found->second.empty() ? std::string(fallback) : found->second;
    };
    const std::string host = option("host", "127.0.0.1");
    try {
      // Fit to the path: an Ethernet payload, or larger frames when every peer is local.
      bool loopback = host.rfind("127.", 0) == 0;
      mtu_ = std::stoul(option("mtu", std::to_string(loopback ? kLoopbackMtu : kDefaultMtu).c_str()));
      rcvbuf_ = std::stoi(option("rcvbuf", std::to_string(kDefaultReceiveBuffer).c_str()));
      sndbuf_ = std::stoi(option("sndbuf", std::to_string(kDefaultSocketBuffer).c_str()));
    } catch (const std::exception&) {
      throw std::runtime_error("udp transport: options mtu, rcvbuf and sndbuf must be numbers");
    }
    pace_ = parse_pace(option("pace", "0"));
    if (mtu_ < 64 || mtu_ > kLargestMtu) {
      throw std::runtime_error(fmt::format("udp transport: mtu {} outside 64..{}", mtu_, kLargestMtu));
    }
    fd_.reset(::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd_) throw system_error("socket");
    size_socket_buffer(fd_.get(), SO_RCVBUF, SO_RCVBUFFORCE, rcvbuf_);
    size_socket_buffer(fd_.get(), SO_SNDBUF, SO_SNDBUFFORCE, sndbuf_);
    sockaddr_in local = parse_address(host + ":1");
    local.sin_port = 0;
    if (::bind(fd_.get(), reinterpret_cast<sockaddr*>(&local), sizeof local) != 0) throw system_error("bind " + host);
    // Receive buffers one byte longer than the MTU: a longer datagram shows as truncated.
    storage_.resize(kBatch * (mtu_ + 1));
    for (std::size_t i = 0; i < kBatch; ++i) {
      receive_iov_[i] = iovec{storage_.data() + i * (mtu_ + 1), mtu_ + 1};
    }
  }


  std::string_view name() const override { return "udp"; }
  Capabilities capabilities() const override { return Capabilities{mtu_, false}; }

  std::string local_address() override {
    sockaddr_in local{};
    socklen_t size = sizeof local;
    if (::getsockname(fd_.get(), reinterpret_cast<sockaddr*>(&local), &size) != 0) throw system_error("getsockname");
    char ip[INET_ADDRSTRLEN];
    ::inet_ntop(AF_INET, &local.sin_addr, ip, sizeof ip);
    return fmt::format("{}:{}", ip, ntohs(local.sin_port));
  }

  void connect(const std::vector<std::string>& addresses) override {
    // The job may be smaller than the processes started (bsp_begin asked for fewer).
    if (addresses.empty() || addresses.size() > static_cast<std::size_t>(config_.nprocs) ||
        static_cast<std::size_t>(config_.pid) >= addresses.size()) {
      throw std::runtime_error(fmt::format("udp transport: {} addresses for a job of at most {} processes (pid {})",
                                           addresses.size(), config_.nprocs, config_.pid));
    }
    config_.nprocs = static_cast<int>(addresses.size());
    peers_.clear();
    pids_.clear();
    for (std::size_t pid = 0; pid < addresses.size(); ++pid) {
      peers_.push_back(parse_address(addresses[pid]));
      pids_[address_key(peers_.back())] = static_cast<int>(pid);
    }
  }

  SendStatus send(int peer, std::span<const std::byte> frame) override {
    OutFrame one{peer, frame};
    return send_batch(std::span(&one, 1)) == 1 ? SendStatus::sent : SendStatus::busy;
  }

  std::size_t send_batch(std::span<const OutFrame> frames) override {
    std::size_t done = 0;
    while (done < frames.size()) {
      std::size_t count = std::min(kBatch, frames.size() - done);
      if (pace_.count() > 0) {
        // Throttled (UDP-2): one datagram per gap; the caller retries when refused.
        auto now = std::chrono::steady_clock::now();
        if (now < next_send_) break;
        next_send_ = std::max(next_send_, now) + pace_;  // the earliest time of the next one
        count = 1;
      }
      for (std::size_t i = 0; i < count; ++i) {
        const OutFrame& frame = frames[done + i];
        send_iov_[i] = iovec{const_cast<std::byte*>(frame.bytes.data()), frame.bytes.size()};
        send_headers_[i] = mmsghdr{};
        send_headers_[i].msg_hdr.msg_name = &peers_.at(static_cast<std::size_t>(frame.peer));
        send_headers_[i].msg_hdr.msg_namelen = sizeof(sockaddr_in);
        send_headers_[i].msg_hdr.msg_iov = &send_iov_[i];
        send_headers_[i].msg_hdr.msg_iovlen = 1;
      }
      int sent = ::sendmmsg(fd_.get(), send_headers_, static_cast<unsigned>(count), 0);
      if (sent < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS) break;  // busy: retry later
        // This datagram cannot go. Transient (peer briefly unreachable): it is lost and
        // recovery resends it. Permanent: the peer is unreachable, say so (once).
        int peer = frames[done].peer;
        if (permanent_send_error(errno) && !lost_.count(peer)) lost_[peer] = std::strerror(errno);
        ++done;
        continue;
      }
      done += static_cast<std::size_t>(sent);
    }
    return done;
  }

  std::size_t receive(FrameSink& sink, std::size_t max_frames) override {
    for (auto& [peer, why] : lost_) {
      if (!why.empty()) sink.on_peer_lost(peer, "udp transport: sending failed: " + why);
      why.clear();
    }
    std::size_t count = std::min(kBatch, max_frames);
    if (count == 0) return 0;
    for (std::size_t i = 0; i < count; ++i) {
      receive_headers_[i] = mmsghdr{};
      receive_headers_[i].msg_hdr.msg_name = &sources_[i];
      receive_headers_[i].msg_hdr.msg_namelen = sizeof(sockaddr_in);
      receive_headers_[i].msg_hdr.msg_iov = &receive_iov_[i];
      receive_headers_[i].msg_hdr.msg_iovlen = 1;
    }
    int got;
    do {
      got = ::recvmmsg(fd_.get(), receive_headers_, static_cast<unsigned>(count), MSG_DONTWAIT, nullptr);
    } while (got < 0 && errno == EINTR);
    if (got <= 0) return 0;
    for (int i = 0; i < got; ++i) {
      // A datagram from an address that is no process of this job: say so, the layer
      // above counts and drops it.
      auto found = pids_.find(address_key(sources_[i]));
      int pid = found == pids_.end() ? kNotAMember : found->second;
      std::size_t length = receive_headers_[i].msg_len;
      sink.on_frame(pid, std::span<const std::byte>(static_cast<const std::byte*>(receive_iov_[i].iov_base),
                                                    std::min(length, mtu_ + 1)));
    }
    return static_cast<std::size_t>(got);
  }

  bool flush() override { return true; }  // sendmmsg hands every frame to the kernel
  int wait_fd() const override { return fd_.get(); }

 private:
  TransportConfig config_;
  std::size_t mtu_ = kDefaultMtu;
  int rcvbuf_ = kDefaultReceiveBuffer;
  int sndbuf_ = kDefaultSocketBuffer;
  FileDescriptor fd_;
  std::chrono::nanoseconds pace_{0};
  std::chrono::steady_clock::time_point next_send_{};
  std::vector<sockaddr_in> peers_;
  std::unordered_map<std::uint64_t, int> pids_;
  std::map<int, std::string> lost_;  // peers a permanent send error cut off (text: not yet reported)
  std::vector<std::byte> storage_;
  iovec receive_iov_[kBatch];
  mmsghdr receive_headers_[kBatch];
  sockaddr_in sources_[kBatch];
  iovec send_iov_[kBatch];
  mmsghdr send_headers_[kBatch];
};

TransportRegistration registration("udp", make_udp_transport);

}  // namespace

std::unique_ptr<Transport> make_udp_transport(const TransportConfig& config) {
  return std::make_unique<UdpTransport>(config);
}

}  // namespace bsp::transport
