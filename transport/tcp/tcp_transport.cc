// transport/tcp/tcp_transport.cc: full-mesh TCP transport (see tcp_transport.h).
//
// Set-up: every process listens; pid i connects to every lower pid and accepts from
// every higher one; each connection opens with {job id, pid} so an acceptor knows who
// called and a stray connection from another job is refused.
// Data path: each frame goes out as [u32 length][frame] with one writev; what the kernel
// does not take is kept in the peer's queue (which makes send() busy until flushed).
// Receive reads whatever the kernel has for the readable sockets epoll reports and hands
// out every complete frame in place.
#include "transport/tcp/tcp_transport.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "transport/registry.h"

namespace bsp::transport {
namespace {

constexpr std::size_t kTcpMtu = 65536;             // largest frame
constexpr std::size_t kReadChunk = 256 * 1024;     // bytes asked of the kernel per recv
constexpr int kConnectTimeoutMs = 60000;
constexpr std::size_t kDirectPollPeers = 2;        // up to this many peers: recv each, no epoll

std::runtime_error system_error(const std::string& what) {
  return std::runtime_error(fmt::format("tcp transport: {}: {}", what, std::strerror(errno)));
}

struct Hello {
  std::uint32_t job_id;
  std::int32_t pid;
};

// Reads or writes exactly size bytes on a blocking socket.
void write_all(int fd, const void* data, std::size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::send(fd, p, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw system_error("handshake send");
    p += n;
    size -= static_cast<std::size_t>(n);
  }
}

bool read_all(int fd, void* data, std::size_t size, int timeout_ms) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    pollfd waiter{fd, POLLIN, 0};
    if (::poll(&waiter, 1, timeout_ms) <= 0) return false;
    ssize_t n = ::recv(fd, p, size, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// A byte queue that reads append to and frames are consumed from, without zero-filling
// the room a read may use (a std::vector resize would clear it on every recv).
class ByteBuffer {
 public:
  std::span<const std::byte> bytes() const { return {data_.get() + begin_, end_ - begin_}; }
  void consume(std::size_t count) {
    begin_ += count;
    if (begin_ == end_) begin_ = end_ = 0;
  }
  // At least `want` writable bytes after the stored ones (moving or growing storage).
  std::span<std::byte> room(std::size_t want) {
    if (capacity_ - end_ < want) {
      std::size_t stored = end_ - begin_;
      if (stored + want > capacity_ || begin_ == 0) {
        std::size_t capacity = std::max(2 * capacity_, stored + want);
        auto bigger = std::make_unique_for_overwrite<std::byte[]>(capacity);
        if (stored) std::memcpy(bigger.get(), data_.get() + begin_, stored);
        data_ = std::move(bigger);
        capacity_ = capacity;
      } else {
        std::memmove(data_.get(), data_.get() + begin_, stored);
      }
      begin_ = 0;
      end_ = stored;
    }
    return {data_.get() + end_, capacity_ - end_};
  }
  void grow(std::size_t count) { end_ += count; }

 private:
  std::unique_ptr<std::byte[]> data_;
  std::size_t capacity_ = 0, begin_ = 0, end_ = 0;
};

class TcpTransport final : public Transport {
 public:
  explicit TcpTransport(const TransportConfig& config)
      : config_(config), peers_(static_cast<std::size_t>(config.nprocs)) {
    auto option = [&](const char* key, const char* fallback) {
      auto found = config.options.find(key);
      return found == config.options.end() ? std::string(fallback) : found->second;
    };
    host_ = option("host", "127.0.0.1");
    sndbuf_ = std::stoi(option("sndbuf", "0"));
    rcvbuf_ = std::stoi(option("rcvbuf", "0"));
  }

  ~TcpTransport() override {
    for (Peer& peer : peers_) {
      if (peer.fd >= 0) ::close(peer.fd);
    }
    if (listen_fd_ >= 0) ::close(listen_fd_);
    if (epoll_fd_ >= 0) ::close(epoll_fd_);
  }

  std::string_view name() const override { return "tcp"; }
  Capabilities capabilities() const override { return {kTcpMtu, true}; }

  std::string local_address() override {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listen_fd_ < 0) throw system_error("socket");
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = 0;
    if (::inet_pton(AF_INET, host_.c_str(), &address.sin_addr) != 1) {
      throw std::runtime_error(fmt::format("tcp transport: bad host address '{}'", host_));
    }
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) < 0) {
      throw system_error("bind " + host_);
    }
    if (::listen(listen_fd_, SOMAXCONN) < 0) throw system_error("listen");
    socklen_t length = sizeof address;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&address), &length);
    return fmt::format("{}:{}", host_, ntohs(address.sin_port));
  }

  void connect(const std::vector<std::string>& addresses) override {
    const int nprocs = static_cast<int>(addresses.size());
    peers_.resize(static_cast<std::size_t>(nprocs));
    for (int pid = 0; pid < config_.pid; ++pid) dial(pid, addresses[static_cast<std::size_t>(pid)]);
    for (int accepted = config_.pid + 1; accepted < nprocs;) {
      pollfd waiter{listen_fd_, POLLIN, 0};
      if (::poll(&waiter, 1, kConnectTimeoutMs) <= 0) {
        throw std::runtime_error("tcp transport: timed out waiting for peers to connect");
      }
      int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      Hello hello{};
      if (!read_all(fd, &hello, sizeof hello, kConnectTimeoutMs) || hello.job_id != config_.job_id ||
          hello.pid <= config_.pid || hello.pid >= nprocs || peers_[hello.pid].fd >= 0) {
        ::close(fd);  // a stray or duplicate connection: not one of ours
        continue;
      }
      adopt(hello.pid, fd);
      ++accepted;
    }
    ::close(listen_fd_);
    listen_fd_ = -1;
    epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
    if (epoll_fd_ < 0) throw system_error("epoll_create1");
    for (int pid = 0; pid < nprocs; ++pid) {
      if (pid == config_.pid) continue;
      epoll_event event{};
      event.events = EPOLLIN;
      event.data.u32 = static_cast<std::uint32_t>(pid);
      if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, peers_[pid].fd, &event) < 0) throw system_error("epoll_ctl");
    }
  }

  SendStatus send(int peer_pid, std::span<const std::byte> frame) override {
    Peer& peer = peers_[static_cast<std::size_t>(peer_pid)];
    if (peer.lost) return SendStatus::sent;  // reported by receive(); drop quietly
    if (!peer.queued.empty() && !flush_peer(peer_pid)) return SendStatus::busy;
    std::uint32_t length = static_cast<std::uint32_t>(frame.size());
    iovec parts[2] = {{&length, 4}, {const_cast<std::byte*>(frame.data()), frame.size()}};
    ssize_t sent = ::writev(peer.fd, parts, 2);
    if (sent < 0) {
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        mark_lost(peer_pid, std::strerror(errno));
        return SendStatus::sent;
      }
      sent = 0;
    }
    std::size_t total = 4 + frame.size();
    if (static_cast<std::size_t>(sent) < total) {
      // Keep the unsent tail; the frame is ours now, the caller may reuse its buffer.
      const auto* header = reinterpret_cast<const std::byte*>(&length);
      for (std::size_t i = static_cast<std::size_t>(sent); i < 4; ++i) peer.queued.push_back(header[i]);
      std::size_t body_from = sent > 4 ? static_cast<std::size_t>(sent) - 4 : 0;
      peer.queued.insert(peer.queued.end(), frame.begin() + static_cast<std::ptrdiff_t>(body_from), frame.end());
      watch_writable(peer_pid, true);
    }
    return SendStatus::sent;
  }

  std::size_t receive(FrameSink& sink, std::size_t max_frames) override {
    std::size_t delivered = 0;
    // Frames already buffered from an earlier read come first.
    for (int pid = 0; pid < static_cast<int>(peers_.size()) && delivered < max_frames; ++pid) {
      if (pid != config_.pid) delivered += deliver(pid, sink, max_frames - delivered);
    }
    if (delivered >= max_frames) return delivered;
    if (peers_.size() <= kDirectPollPeers + 1) {
      // Few peers: asking each socket costs fewer system calls than epoll + recv.
      for (int pid = 0; pid < static_cast<int>(peers_.size()); ++pid) {
        if (pid != config_.pid && !peers_[pid].lost) delivered += read_and_deliver(pid, sink, max_frames, delivered);
      }
      return delivered;
    }
    epoll_event events[64];
    int ready = ::epoll_wait(epoll_fd_, events, 64, 0);
    for (int i = 0; i < ready; ++i) {
      int pid = static_cast<int>(events[i].data.u32);
      if (events[i].events & EPOLLOUT) flush_peer(pid);
      if (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) delivered += read_and_deliver(pid, sink, max_frames, delivered);
    }
    return delivered;
  }

  bool flush() override {
    bool drained = true;
    for (int pid = 0; pid < static_cast<int>(peers_.size()); ++pid) {
      if (pid != config_.pid && !peers_[pid].queued.empty()) drained &= flush_peer(pid);
    }
    return drained;
  }

  int wait_fd() const override { return epoll_fd_; }

 private:
  struct Peer {
    int fd = -1;
    bool lost = false;
    ByteBuffer inbox;                   // bytes read, not yet handed out as frames
    std::vector<std::byte> queued;      // bytes the kernel did not take yet
    std::size_t queued_start = 0;
    bool watching_writable = false;
  };

  void dial(int pid, const std::string& address) {
    auto colon = address.rfind(':');
    sockaddr_in target{};
    target.sin_family = AF_INET;
    target.sin_port = htons(static_cast<std::uint16_t>(std::stoi(address.substr(colon + 1))));
    if (::inet_pton(AF_INET, address.substr(0, colon).c_str(), &target.sin_addr) != 1) {
      throw std::runtime_error(fmt::format("tcp transport: bad peer address '{}'", address));
    }
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) throw system_error("socket");
    tune(fd);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kConnectTimeoutMs);
    // An unanswered SYN (a firewall between hosts) ends at the deadline too, not after
    // the kernel's two minutes of retries.
    timeval limit{kConnectTimeoutMs / 1000, (kConnectTimeoutMs % 1000) * 1000};
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
    while (::connect(fd, reinterpret_cast<sockaddr*>(&target), sizeof target) < 0) {
      if (std::chrono::steady_clock::now() > deadline || (errno != ECONNREFUSED && errno != EINTR)) {
        throw system_error(fmt::format("connect to pid {} at {}", pid, address));
      }
      ::usleep(1000);
    }
    timeval no_limit{};
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &no_limit, sizeof no_limit);
    Hello hello{config_.job_id, config_.pid};
    write_all(fd, &hello, sizeof hello);
    adopt(pid, fd);
  }

  void tune(int fd) {
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (sndbuf_ > 0) ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf_, sizeof sndbuf_);
    if (rcvbuf_ > 0) ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf_, sizeof rcvbuf_);
  }

  void adopt(int pid, int fd) {
    tune(fd);
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    peers_[static_cast<std::size_t>(pid)].fd = fd;
  }

  void watch_writable(int pid, bool on) {
    Peer& peer = peers_[static_cast<std::size_t>(pid)];
    if (peer.watching_writable == on) return;
    peer.watching_writable = on;
    epoll_event event{};
    event.events = EPOLLIN | (on ? EPOLLOUT : 0u);
    event.data.u32 = static_cast<std::uint32_t>(pid);
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, peer.fd, &event);
  }

  // Pushes the peer's queued bytes; true when none are left.
  bool flush_peer(int pid) {
    Peer& peer = peers_[static_cast<std::size_t>(pid)];
    while (peer.queued_start < peer.queued.size()) {
      ssize_t sent = ::send(peer.fd, peer.queued.data() + peer.queued_start,
                            peer.queued.size() - peer.queued_start, MSG_NOSIGNAL);
      if (sent < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return false;
        mark_lost(pid, std::strerror(errno));
        break;
      }
      peer.queued_start += static_cast<std::size_t>(sent);
    }
    peer.queued.clear();
    peer.queued_start = 0;
    watch_writable(pid, false);
    return true;
  }

  // Reads pid's socket and hands out its complete frames (within the max_frames budget,
  // of which `used` are spent); reports the loss after the frames if the peer is gone.
  std::size_t read_and_deliver(int pid, FrameSink& sink, std::size_t max_frames, std::size_t used) {
    bool closed = !read_from(pid);
    // Frames that arrived before the connection closed are still good: hand them out
    // first, then report the loss.
    std::size_t delivered = deliver(pid, sink, closed ? SIZE_MAX : max_frames - std::min(used, max_frames));
    if (closed) sink.on_peer_lost(pid, lost_reason_);
    return delivered;
  }

  // Reads what the kernel has for pid; false when the connection is gone.
  bool read_from(int pid) {
    Peer& peer = peers_[static_cast<std::size_t>(pid)];
    if (peer.lost) return true;
    // Read what the kernel has, into room after the bytes not yet handed out.
    for (;;) {
      std::span<std::byte> room = peer.inbox.room(kReadChunk);
      ssize_t got = ::recv(peer.fd, room.data(), room.size(), MSG_DONTWAIT);
      if (got > 0) {
        peer.inbox.grow(static_cast<std::size_t>(got));
        if (static_cast<std::size_t>(got) < room.size()) return true;  // drained
        continue;
      }
      if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
      if (got < 0 && errno == EINTR) continue;
      mark_lost(pid, got == 0 ? "connection closed" : std::strerror(errno));
      return false;
    }
  }

  std::size_t deliver(int pid, FrameSink& sink, std::size_t max_frames) {
    Peer& peer = peers_[static_cast<std::size_t>(pid)];
    std::size_t delivered = 0;
    while (delivered < max_frames) {
      std::span<const std::byte> available = peer.inbox.bytes();
      if (available.size() < 4) break;
      std::uint32_t length;
      std::memcpy(&length, available.data(), 4);
      if (length > kTcpMtu) {
        mark_lost(pid, fmt::format("bad frame length {}", length));
        sink.on_peer_lost(pid, lost_reason_);
        break;
      }
      if (available.size() < 4 + length) break;
      sink.on_frame(pid, available.subspan(4, length));
      peer.inbox.consume(4 + length);
      ++delivered;
    }
    return delivered;
  }

  void mark_lost(int pid, const std::string& why) {
    Peer& peer = peers_[static_cast<std::size_t>(pid)];
    if (peer.lost) return;
    peer.lost = true;
    lost_reason_ = fmt::format("tcp connection to pid {}: {}", pid, why);
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, peer.fd, nullptr);
  }

  TransportConfig config_;
  std::string host_;
  int sndbuf_ = 0;
  int rcvbuf_ = 0;
  int listen_fd_ = -1;
  int epoll_fd_ = -1;
  std::vector<Peer> peers_;
  std::string lost_reason_;
};

const TransportRegistration kRegistration{"tcp", make_tcp_transport};

}  // namespace

std::unique_ptr<Transport> make_tcp_transport(const TransportConfig& config) {
  return std::make_unique<TcpTransport>(config);
}

}  // namespace bsp::transport
