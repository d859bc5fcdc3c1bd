// transport/tcp/tcp_transport.cc: full-mesh TCP transport (see tcp_transport.h).
//
// Set-up: every process listens; pid i dials every lower pid and accepts from every
// higher one, all at once in one poll loop, so a connection that says nothing delays only
// itself. A connection is adopted only after both ends proved the job's secret and their
// pids (little-endian integers; A = the accepting pid, D = the dialing pid):
//
//   A -> D  challenge  u32 job id, i32 A, 16 random bytes nA                     (24 bytes)
//   D -> A  hello      i32 D, 16 random bytes nD,
//                      u64 MAC(secret, "bsplib tcp hello"   | job id | D | A | nA | nD)  (28)
//   A -> D  welcome    u64 MAC(secret, "bsplib tcp welcome" | job id | A | D | nD | nA)  (8)
//
// (MAC = SipHash-2-4, auth/mac.h; the two purpose strings keep one answer from serving as
// the other.) A reads exactly 28 bytes from a connection before it is proven, and closes
// it, counting it as refused, when it stays silent for 2 s, claims a pid that is not
// higher than A's, out of range or already connected, or fails the MAC. D reads exactly
// 24 + 8 bytes and adopts the connection only if the challenge names the job and pid it
// dialed and the welcome verifies; otherwise it closes it and dials again (backing off)
// until the set-up deadline (60 s), which names the pids still missing.
//
// Data path: each frame goes out as [u32 length][frame] with one sendmsg; what the kernel
// does not take is kept in the peer's queue (which makes send() busy until flushed).
// Receive reads whatever the kernel has for the readable sockets epoll reports and hands
// out every complete frame in place. A connection lost on either side (read or write) is
// reported once by receive(), after the frames that arrived before the loss; a loss found
// while sending also makes wait_fd() readable (an eventfd in the epoll set).
#include "transport/tcp/tcp_transport.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

#include "auth/mac.h"
#include "transport/file_descriptor.h"
#include "transport/registry.h"

namespace bsp::transport {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr std::size_t kTcpMtu = 65536;             // largest frame
constexpr std::size_t kReadChunk = 256 * 1024;     // bytes asked of the kernel per recv
constexpr std::size_t kDirectPollPeers = 2;        // up to this many peers: recv each, no epoll
constexpr std::uint32_t kLossEvent = UINT32_MAX;   // epoll tag of the loss eventfd

// Set-up bounds.
constexpr int kDefaultSetupTimeoutMs = 60000;      // the whole of connect()
constexpr milliseconds kHandshakeDeadline{2000};   // an accepted connection, to prove itself
constexpr std::size_t kMaxUnproven = 64;           // accepted, not yet proven; oldest evicted
constexpr milliseconds kFirstRetry{1};             // dial again after a refusal, doubling
constexpr milliseconds kMaxRetry{200};

// The handshake (layout at the top of the file).
constexpr std::size_t kNonceSize = 16;
constexpr std::size_t kChallengeSize = 4 + 4 + kNonceSize;
constexpr std::size_t kHelloSize = 4 + kNonceSize + 8;
constexpr std::size_t kWelcomeSize = 8;
constexpr std::string_view kHelloPurpose = "bsplib tcp hello";
constexpr std::string_view kWelcomePurpose = "bsplib tcp welcome";
using Nonce = std::array<std::byte, kNonceSize>;

std::runtime_error system_error(const std::string& what) {
  return std::runtime_error(fmt::format("tcp transport: {}: {}", what, std::strerror(errno)));
}

void put_u32(std::byte* at, std::uint32_t value) {
  for (int i = 0; i < 4; ++i) at[i] = static_cast<std::byte>(value >> (8 * i));
}
std::uint32_t get_u32(const std::byte* at) {
  std::uint32_t value = 0;
  for (int i = 0; i < 4; ++i) value |= std::to_integer<std::uint32_t>(at[i]) << (8 * i);
  return value;
}
void put_u64(std::byte* at, std::uint64_t value) {
  for (int i = 0; i < 8; ++i) at[i] = static_cast<std::byte>(value >> (8 * i));
}
std::uint64_t get_u64(const std::byte* at) {
  std::uint64_t value = 0;
  for (int i = 0; i < 8; ++i) value |= std::to_integer<std::uint64_t>(at[i]) << (8 * i);
  return value;
}

// MAC(secret, purpose | job id | from | to | first | second).
std::uint64_t handshake_tag(const auth::Key& secret, std::string_view purpose, std::uint32_t job_id,
                            int from, int to, const Nonce& first, const Nonce& second) {
  std::array<std::byte, 12> fields;
  put_u32(fields.data(), job_id);
  put_u32(fields.data() + 4, static_cast<std::uint32_t>(from));
  put_u32(fields.data() + 8, static_cast<std::uint32_t>(to));
  return auth::mac(secret, {std::as_bytes(std::span(purpose.data(), purpose.size())), fields,
                            first, second});
}

std::string pid_list(const std::vector<int>& pids) {
  return fmt::format("{} {}", pids.size() == 1 ? "pid" : "pids", fmt::join(pids, ", "));
}

using Fd = FileDescriptor;

// Reads into buffer[have, size) without blocking. complete: full; partial: the kernel has
// no more now; failed: the connection closed or broke (why says how).
enum class Got { complete, partial, failed };
Got read_exact(int fd, std::span<std::byte> buffer, std::size_t& have, std::string& why) {
  while (have < buffer.size()) {
    ssize_t n = ::recv(fd, buffer.data() + have, buffer.size() - have, MSG_DONTWAIT);
    if (n > 0) {
      have += static_cast<std::size_t>(n);
      continue;
    }
    if (n == 0) {
      why = "closed the connection";
      return Got::failed;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return Got::partial;
    why = std::strerror(errno);
    return Got::failed;
  }
  return Got::complete;
}

// Sends a handshake message whole. It is the first thing written on a fresh connection
// (at most 24 bytes, after at most 24 more), so the kernel's empty send buffer always
// takes it; anything else is a broken connection.
bool send_whole(int fd, std::span<const std::byte> bytes) {
  ssize_t n;
  do {
    n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  } while (n < 0 && errno == EINTR);
  return n == static_cast<ssize_t>(bytes.size());
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
    setup_timeout_ms_ = std::stoi(option("connect_timeout_ms", std::to_string(kDefaultSetupTimeoutMs).c_str()));
    if (setup_timeout_ms_ <= 0) {
      throw std::runtime_error(fmt::format("tcp transport: connect_timeout_ms={} must be positive", setup_timeout_ms_));
    }
  }

  ~TcpTransport() override {
    for (Peer& peer : peers_) {
      if (peer.fd >= 0) ::close(peer.fd);
    }
    if (listen_fd_ >= 0) ::close(listen_fd_);
    if (epoll_fd_ >= 0) ::close(epoll_fd_);
    if (loss_fd_ >= 0) ::close(loss_fd_);
  }

  std::string_view name() const override { return "tcp"; }
  // Every connection proved the job's secret and its pid when it was set up (the
  // handshake above), so frames need no MAC of their own.
  Capabilities capabilities() const override {
    Capabilities capabilities{kTcpMtu, true};
    capabilities.authenticated_links = true;
    // TCP's own checksum (and the link's CRC under it) guards the bytes of a connection
    // nobody else can write into: a CRC32C of ours over every frame would cost as much as
    // a copy of the data (9 GB/s against a 4.7 GB/s stream on loopback) and find nothing.
    capabilities.intact = true;
    return capabilities;
  }

  std::string local_address() override {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (listen_fd_ < 0) throw system_error("socket");
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = 0;
    if (::inet_pton(AF_INET, host_.c_str(), &address.sin_addr) != 1) {
      throw std::runtime_error(fmt::format("tcp transport: bad host address '{}'", host_));
    }
    tune(listen_fd_);  // accepted connections inherit the buffer sizes (and window scale)
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
    if (config_.pid < 0 || config_.pid >= nprocs) {
      throw std::runtime_error(fmt::format("tcp transport: pid {} is not among the {} addresses", config_.pid, nprocs));
    }
    if (listen_fd_ < 0 && config_.pid + 1 < nprocs) {
      throw std::runtime_error("tcp transport: connect() before local_address()");
    }
    peers_.resize(static_cast<std::size_t>(nprocs));
    set_up(addresses);
    if (listen_fd_ >= 0) ::close(listen_fd_);
    listen_fd_ = -1;
    epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
    if (epoll_fd_ < 0) throw system_error("epoll_create1");
    loss_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (loss_fd_ < 0) throw system_error("eventfd");
    watch(loss_fd_, kLossEvent);
    for (int pid = 0; pid < nprocs; ++pid) {
      if (pid != config_.pid) watch(peers_[pid].fd, static_cast<std::uint32_t>(pid));
    }
    if (stats_.refused_connections + stats_.unproven_peers > 0) {
      std::fprintf(stderr, "tcp transport: pid %d refused %zu connection(s) during set-up (last: %s)\n", config_.pid,
                   stats_.refused_connections + stats_.unproven_peers, stats_.last_refusal.c_str());
    }
  }

  SendStatus send(int peer_pid, std::span<const std::byte> frame) override {
    return send_gathered(peer_pid, frame, {});
  }

  // [u32 length][head][body] in one sendmsg, the body from where the caller keeps it.
  SendStatus send_gathered(int peer_pid, std::span<const std::byte> head, std::span<const std::byte> body) override {
    Peer& peer = peers_[static_cast<std::size_t>(peer_pid)];
    if (peer.lost) return SendStatus::sent;  // reported by receive(); drop quietly
    if (!peer.queued.empty() && !flush_peer(peer_pid)) return SendStatus::busy;
    if (peer.lost) return SendStatus::sent;
    std::uint32_t length = static_cast<std::uint32_t>(head.size() + body.size());
    iovec parts[3] = {{&length, 4},
                      {const_cast<std::byte*>(head.data()), head.size()},
                      {const_cast<std::byte*>(body.data()), body.size()}};
    msghdr message{};
    message.msg_iov = parts;
    message.msg_iovlen = body.empty() ? 2 : 3;
    // MSG_NOSIGNAL: a peer that is gone is an EPIPE to report, not a SIGPIPE that kills us.
    ssize_t sent = ::sendmsg(peer.fd, &message, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent < 0) {
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        mark_lost(peer_pid, fmt::format("send: {}", std::strerror(errno)), true);
        return SendStatus::sent;
      }
      sent = 0;
    }
    std::size_t total = 4 + length;
    if (static_cast<std::size_t>(sent) < total) {
      // Keep the unsent tail; the frame is ours now, the caller may reuse its buffers.
      std::size_t skip = static_cast<std::size_t>(sent);
      for (const iovec& part : parts) {
        const auto* bytes = static_cast<const std::byte*>(part.iov_base);
        std::size_t from = std::min(skip, part.iov_len);
        peer.queued.insert(peer.queued.end(), bytes + from, bytes + part.iov_len);
        skip -= from;
      }
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
    if (delivered < max_frames) {
      if (peers_.size() <= kDirectPollPeers + 1) {
        // Few peers: asking each socket costs fewer system calls than epoll + recv.
        for (int pid = 0; pid < static_cast<int>(peers_.size()); ++pid) {
          if (pid != config_.pid && !peers_[pid].lost) delivered += read_and_deliver(pid, sink, max_frames, delivered);
        }
      } else {
        epoll_event events[64];
        int ready = ::epoll_wait(epoll_fd_, events, 64, 0);
        for (int i = 0; i < ready; ++i) {
          if (events[i].data.u32 == kLossEvent) continue;  // report_losses() below
          int pid = static_cast<int>(events[i].data.u32);
          if (events[i].events & EPOLLOUT) flush_peer(pid);
          if (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
            delivered += read_and_deliver(pid, sink, max_frames, delivered);
          }
        }
      }
    }
    return delivered + report_losses(sink);
  }

  bool flush() override {
    bool drained = true;
    for (int pid = 0; pid < static_cast<int>(peers_.size()); ++pid) {
      if (pid != config_.pid && !peers_[pid].queued.empty()) drained &= flush_peer(pid);
    }
    return drained;
  }

  int wait_fd() const override { return epoll_fd_; }

  const TcpSetupStats& setup_stats() const { return stats_; }

 private:
  struct Peer {
    int fd = -1;
    bool lost = false;
    bool loss_reported = false;
    std::string why;                    // the loss, once lost
    ByteBuffer inbox;                   // bytes read, not yet handed out as frames
    std::vector<std::byte> queued;      // bytes the kernel did not take yet
    std::size_t queued_start = 0;
    bool watching_writable = false;
  };

  // ---------------------------------------------------------------- set-up

  // A connection to a lower pid, dialed (and dialed again after a refusal) until adopted.
  struct Dial {
    enum class Step { waiting, connecting, challenge, welcome, done };
    int pid = 0;
    std::string address;
    sockaddr_in target{};
    Step step = Step::waiting;
    Fd fd;
    Clock::time_point retry_at{};
    milliseconds backoff = kFirstRetry;
    std::array<std::byte, kChallengeSize> challenge{};
    std::array<std::byte, kWelcomeSize> welcome{};
    std::size_t have = 0;
    Nonce own_nonce{};
    std::string problem;  // the last attempt's failure, for the timeout message
  };

  // A connection accepted on the listening port, not yet proven.
  struct Unproven {
    Fd fd;
    Clock::time_point deadline;
    Nonce nonce{};
    std::array<std::byte, kHelloSize> hello{};
    std::size_t have = 0;
  };

  void set_up(const std::vector<std::string>& addresses) {
    const int nprocs = static_cast<int>(addresses.size());
    const int self = config_.pid;
    const auto start = Clock::now();
    const auto deadline = start + milliseconds(setup_timeout_ms_);
    std::vector<Dial> dials(static_cast<std::size_t>(self));
    for (int pid = 0; pid < self; ++pid) {
      Dial& dial = dials[static_cast<std::size_t>(pid)];
      dial.pid = pid;
      dial.address = addresses[static_cast<std::size_t>(pid)];
      dial.target = parse_address(dial.address);
      dial.retry_at = start;
    }
    std::vector<Unproven> unproven;
    int missing_from = nprocs - 1 - self;  // higher pids not yet adopted
    int missing_to = self;                 // lower pids not yet adopted
    std::vector<pollfd> waiters;
    std::vector<std::pair<int, std::size_t>> owners;  // per waiter: 0 listener, 1 dial, 2 unproven; index

    while (missing_from + missing_to > 0) {
      auto now = Clock::now();
      if (now >= deadline) throw timeout(dials, nprocs);
      for (Dial& dial : dials) {
        if (dial.step == Dial::Step::waiting && dial.retry_at <= now) start_dial(dial, now);
      }
      for (Unproven& connection : unproven) {
        if (connection.fd && connection.deadline <= now) {
          std::string said = connection.have == 0 ? "nothing" : fmt::format("{} bytes", connection.have);
          refuse(connection, fmt::format("a connection said {} of its {}-byte hello in {} ms", said, kHelloSize,
                                         kHandshakeDeadline.count()));
        }
      }
      std::erase_if(unproven, [](const Unproven& connection) { return !connection.fd; });
      if (missing_from + missing_to == 0) break;

      // Everything that may progress, in one poll.
      waiters.clear();
      owners.clear();
      auto wake = deadline;
      if (missing_from > 0) {
        waiters.push_back({listen_fd_, POLLIN, 0});
        owners.emplace_back(0, 0);
      }
      for (std::size_t i = 0; i < dials.size(); ++i) {
        Dial& dial = dials[i];
        if (dial.step == Dial::Step::waiting) wake = std::min(wake, dial.retry_at);
        if (dial.step == Dial::Step::connecting) {
          waiters.push_back({dial.fd.get(), POLLOUT, 0});
          owners.emplace_back(1, i);
        } else if (dial.step == Dial::Step::challenge || dial.step == Dial::Step::welcome) {
          waiters.push_back({dial.fd.get(), POLLIN, 0});
          owners.emplace_back(1, i);
        }
      }
      for (std::size_t i = 0; i < unproven.size(); ++i) {
        wake = std::min(wake, unproven[i].deadline);
        waiters.push_back({unproven[i].fd.get(), POLLIN, 0});
        owners.emplace_back(2, i);
      }
      auto wait = std::chrono::ceil<milliseconds>(wake - now).count();
      int ready = ::poll(waiters.data(), waiters.size(), static_cast<int>(std::clamp<long long>(wait, 0, INT_MAX)));
      if (ready < 0) {
        if (errno == EINTR) continue;
        throw system_error("poll");
      }
      bool listener_ready = false;
      for (std::size_t w = 0; w < waiters.size(); ++w) {
        if (waiters[w].revents == 0) continue;
        auto [kind, index] = owners[w];
        if (kind == 0) {
          listener_ready = true;
        } else if (kind == 1) {
          Dial& dial = dials[index];
          progress_dial(dial);
          if (dial.step == Dial::Step::done) {
            adopt(dial.pid, dial.fd.release());
            --missing_to;
          }
        } else if (int pid = progress_unproven(unproven[index], nprocs); pid >= 0) {
          adopt(pid, unproven[index].fd.release());
          --missing_from;
        }
      }
      if (listener_ready) accept_all(unproven);
    }
    for (Unproven& connection : unproven) {
      if (connection.fd) refuse(connection, "a connection was still unproven when every peer had connected");
    }
  }

  sockaddr_in parse_address(const std::string& address) {
    auto colon = address.rfind(':');
    sockaddr_in target{};
    target.sin_family = AF_INET;
    int port = -1;
    try {
      if (colon != std::string::npos) port = std::stoi(address.substr(colon + 1));
    } catch (const std::exception&) {
    }
    if (colon == std::string::npos || port <= 0 || port > 65535 ||
        ::inet_pton(AF_INET, address.substr(0, colon).c_str(), &target.sin_addr) != 1) {
      throw std::runtime_error(fmt::format("tcp transport: bad peer address '{}'", address));
    }
    target.sin_port = htons(static_cast<std::uint16_t>(port));
    return target;
  }

  // Opens a non-blocking connection to dial.pid; a failure schedules another attempt.
  void start_dial(Dial& dial, Clock::time_point now) {
    dial.fd = Fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!dial.fd) throw system_error("socket");
    tune(dial.fd.get());
    dial.have = 0;
    int result;
    do {
      result = ::connect(dial.fd.get(), reinterpret_cast<const sockaddr*>(&dial.target), sizeof dial.target);
    } while (result < 0 && errno == EINTR);
    if (result == 0) {
      dial.step = Dial::Step::challenge;
    } else if (errno == EINPROGRESS) {
      dial.step = Dial::Step::connecting;
    } else {
      retry(dial, fmt::format("connect: {}", std::strerror(errno)), now);
    }
  }

  void retry(Dial& dial, std::string problem, Clock::time_point now = Clock::now()) {
    dial.fd.reset();
    dial.problem = std::move(problem);
    dial.step = Dial::Step::waiting;
    dial.retry_at = now + dial.backoff;
    dial.backoff = std::min(dial.backoff * 2, kMaxRetry);
  }

  void unproven_peer(Dial& dial, std::string problem) {
    ++stats_.unproven_peers;
    stats_.last_refusal = fmt::format("the process at {} (dialed as pid {}) {}", dial.address, dial.pid, problem);
    retry(dial, std::move(problem));
  }

  void progress_dial(Dial& dial) {
    std::string why;
    switch (dial.step) {
      case Dial::Step::connecting: {
        int error = 0;
        socklen_t length = sizeof error;
        ::getsockopt(dial.fd.get(), SOL_SOCKET, SO_ERROR, &error, &length);
        if (error != 0) return retry(dial, fmt::format("connect: {}", std::strerror(error)));
        dial.step = Dial::Step::challenge;
        return;
      }
      case Dial::Step::challenge: {
        Got got = read_exact(dial.fd.get(), dial.challenge, dial.have, why);
        if (got == Got::failed) return retry(dial, fmt::format("it {} before its challenge", why));
        if (got == Got::partial) return;
        std::uint32_t job_id = get_u32(dial.challenge.data());
        int pid = static_cast<int>(get_u32(dial.challenge.data() + 4));
        if (job_id != config_.job_id || pid != dial.pid) {
          return unproven_peer(dial, fmt::format("says it is pid {} of job {:#x}, not pid {} of job {:#x}", pid, job_id,
                                                 dial.pid, config_.job_id));
        }
        Nonce acceptor_nonce;
        std::memcpy(acceptor_nonce.data(), dial.challenge.data() + 8, kNonceSize);
        auth::random_bytes(dial.own_nonce);
        std::array<std::byte, kHelloSize> hello;
        put_u32(hello.data(), static_cast<std::uint32_t>(config_.pid));
        std::memcpy(hello.data() + 4, dial.own_nonce.data(), kNonceSize);
        put_u64(hello.data() + 4 + kNonceSize, handshake_tag(config_.secret, kHelloPurpose, config_.job_id, config_.pid,
                                                             dial.pid, acceptor_nonce, dial.own_nonce));
        if (!send_whole(dial.fd.get(), hello)) return retry(dial, "sending the hello failed");
        dial.have = 0;
        dial.step = Dial::Step::welcome;
        return;
      }
      case Dial::Step::welcome: {
        Got got = read_exact(dial.fd.get(), dial.welcome, dial.have, why);
        if (got == Got::failed) {
          return retry(dial, fmt::format("it {} instead of welcoming pid {} (a different secret?)", why, config_.pid));
        }
        if (got == Got::partial) return;
        Nonce acceptor_nonce;
        std::memcpy(acceptor_nonce.data(), dial.challenge.data() + 8, kNonceSize);
        std::uint64_t expected = handshake_tag(config_.secret, kWelcomePurpose, config_.job_id, dial.pid, config_.pid,
                                               dial.own_nonce, acceptor_nonce);
        if (!auth::same_tag(get_u64(dial.welcome.data()), expected)) {
          return unproven_peer(dial, "answered with a welcome that fails the job's secret");
        }
        dial.step = Dial::Step::done;  // adopted by set_up()
        return;
      }
      case Dial::Step::waiting:
      case Dial::Step::done:
        return;
    }
  }

  // Accepts every pending connection and challenges it.
  void accept_all(std::vector<Unproven>& unproven) {
    for (;;) {
      int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        return;  // EAGAIN, or out of descriptors: try at the next readiness
      }
      Unproven connection;
      connection.fd = Fd(fd);
      connection.deadline = Clock::now() + kHandshakeDeadline;
      auth::random_bytes(connection.nonce);
      std::array<std::byte, kChallengeSize> challenge;
      put_u32(challenge.data(), config_.job_id);
      put_u32(challenge.data() + 4, static_cast<std::uint32_t>(config_.pid));
      std::memcpy(challenge.data() + 8, connection.nonce.data(), kNonceSize);
      if (!send_whole(fd, challenge)) {
        refuse(connection, "a connection broke before it could be challenged");
        continue;
      }
      if (unproven.size() >= kMaxUnproven) {
        // Many unproven at once: a flood. Keep the newest (real peers answer in
        // microseconds, so the oldest are the silent ones).
        auto oldest = std::find_if(unproven.begin(), unproven.end(), [](const Unproven& c) { return bool(c.fd); });
        if (oldest != unproven.end()) {
          refuse(*oldest, fmt::format("more than {} connections were unproven at once", kMaxUnproven));
        }
        std::erase_if(unproven, [](const Unproven& c) { return !c.fd; });
      }
      unproven.push_back(std::move(connection));
    }
  }

  // Reads a hello; returns the proven pid once it verifies (and the welcome went out), -1
  // while it is incomplete or after refusing it.
  int progress_unproven(Unproven& connection, int nprocs) {
    if (!connection.fd) return -1;
    std::string why;
    Got got = read_exact(connection.fd.get(), connection.hello, connection.have, why);
    if (got == Got::failed) {
      refuse(connection, fmt::format("a connection {} after {} bytes of its hello", why, connection.have));
      return -1;
    }
    if (got == Got::partial) return -1;
    int pid = static_cast<int>(get_u32(connection.hello.data()));
    if (pid <= config_.pid || pid >= nprocs) {
      refuse(connection, fmt::format("a connection claimed pid {}, which does not dial pid {} (job of {})", pid,
                                     config_.pid, nprocs));
      return -1;
    }
    Nonce dialer_nonce;
    std::memcpy(dialer_nonce.data(), connection.hello.data() + 4, kNonceSize);
    std::uint64_t expected = handshake_tag(config_.secret, kHelloPurpose, config_.job_id, pid, config_.pid,
                                           connection.nonce, dialer_nonce);
    if (!auth::same_tag(get_u64(connection.hello.data() + 4 + kNonceSize), expected)) {
      refuse(connection, fmt::format("a connection claiming pid {} failed the job's secret", pid));
      return -1;
    }
    if (peers_[static_cast<std::size_t>(pid)].fd >= 0) {
      refuse(connection, fmt::format("a second connection from pid {}", pid));
      return -1;
    }
    std::array<std::byte, kWelcomeSize> welcome;
    put_u64(welcome.data(), handshake_tag(config_.secret, kWelcomePurpose, config_.job_id, config_.pid, pid,
                                          dialer_nonce, connection.nonce));
    if (!send_whole(connection.fd.get(), welcome)) {
      connection.fd.reset();  // pid's connection broke; it dials again
      return -1;
    }
    return pid;
  }

  void refuse(Unproven& connection, std::string why) {
    ++stats_.refused_connections;
    stats_.last_refusal = std::move(why);
    connection.fd.reset();
  }

  std::runtime_error timeout(const std::vector<Dial>& dials, int nprocs) const {
    std::vector<int> from, to;
    for (int pid = config_.pid + 1; pid < nprocs; ++pid) {
      if (peers_[static_cast<std::size_t>(pid)].fd < 0) from.push_back(pid);
    }
    for (const Dial& dial : dials) {
      if (peers_[static_cast<std::size_t>(dial.pid)].fd < 0) to.push_back(dial.pid);
    }
    std::string message = fmt::format("tcp transport: pid {} has no connection", config_.pid);
    if (!from.empty()) message += " from " + pid_list(from);
    if (!to.empty()) message += fmt::format("{} to {}", from.empty() ? "" : " and", pid_list(to));
    message += fmt::format(" after {:g} s", setup_timeout_ms_ / 1000.0);
    for (const Dial& dial : dials) {
      if (peers_[static_cast<std::size_t>(dial.pid)].fd < 0) {
        message += fmt::format("; pid {} at {}: {}", dial.pid, dial.address,
                               dial.problem.empty() ? "no answer to the connection" : dial.problem);
      }
    }
    if (std::size_t refused = stats_.refused_connections + stats_.unproven_peers; refused > 0) {
      message += fmt::format(" ({} connection{} refused; last: {})", refused, refused == 1 ? "" : "s",
                             stats_.last_refusal);
    }
    return std::runtime_error(message);
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

  // ---------------------------------------------------------------- data path

  void watch(int fd, std::uint32_t tag) {
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.u32 = tag;
    if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event) < 0) throw system_error("epoll_ctl");
  }

  void watch_writable(int pid, bool on) {
    Peer& peer = peers_[static_cast<std::size_t>(pid)];
    if (peer.watching_writable == on || peer.lost) return;
    peer.watching_writable = on;
    epoll_event event{};
    event.events = EPOLLIN | (on ? EPOLLOUT : 0u);
    event.data.u32 = static_cast<std::uint32_t>(pid);
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, peer.fd, &event);
  }

  // Pushes the peer's queued bytes; true when none are left.
  bool flush_peer(int pid) {
    Peer& peer = peers_[static_cast<std::size_t>(pid)];
    while (!peer.lost && peer.queued_start < peer.queued.size()) {
      ssize_t sent = ::send(peer.fd, peer.queued.data() + peer.queued_start,
                            peer.queued.size() - peer.queued_start, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (sent < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return false;
        mark_lost(pid, fmt::format("send: {}", std::strerror(errno)), true);
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
  // of which `used` are spent). A loss is reported by report_losses().
  std::size_t read_and_deliver(int pid, FrameSink& sink, std::size_t max_frames, std::size_t used) {
    read_from(pid);
    return deliver(pid, sink, max_frames - std::min(used, max_frames));
  }

  // Reads what the kernel has for pid; marks the peer lost when the connection is gone.
  void read_from(int pid) {
    Peer& peer = peers_[static_cast<std::size_t>(pid)];
    if (peer.lost) return;
    // Read what the kernel has, into room after the bytes not yet handed out.
    for (;;) {
      std::span<std::byte> room = peer.inbox.room(kReadChunk);
      ssize_t got = ::recv(peer.fd, room.data(), room.size(), MSG_DONTWAIT);
      if (got > 0) {
        peer.inbox.grow(static_cast<std::size_t>(got));
        if (static_cast<std::size_t>(got) < room.size()) return;  // drained
        continue;
      }
      if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      if (got < 0 && errno == EINTR) continue;
      mark_lost(pid, got == 0 ? "connection closed" : fmt::format("recv: {}", std::strerror(errno)), false);
      return;
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
        mark_lost(pid, fmt::format("bad frame length {}", length), false);
        peer.inbox.consume(available.size());  // nothing after it can be framed
        break;
      }
      if (available.size() < 4 + length) break;
      sink.on_frame(pid, available.subspan(4, length));
      peer.inbox.consume(4 + length);
      ++delivered;
    }
    return delivered;
  }

  // Reports each lost peer once, after handing out the frames that arrived before the loss.
  std::size_t report_losses(FrameSink& sink) {
    if (!losses_pending_) return 0;
    losses_pending_ = false;
    std::uint64_t count;
    while (::read(loss_fd_, &count, sizeof count) < 0 && errno == EINTR) {
    }
    std::size_t delivered = 0;
    for (int pid = 0; pid < static_cast<int>(peers_.size()); ++pid) {
      Peer& peer = peers_[static_cast<std::size_t>(pid)];
      if (pid == config_.pid || !peer.lost || peer.loss_reported) continue;
      delivered += deliver(pid, sink, SIZE_MAX);
      peer.loss_reported = true;
      sink.on_peer_lost(pid, fmt::format("tcp connection to pid {}: {}", pid, peer.why));
    }
    return delivered;
  }

  // The connection to pid is gone: stop watching it and make wait_fd() readable until
  // receive() reports it. A loss found while sending first reads what the kernel still
  // holds from the peer, so frames it sent before going are not lost with it.
  void mark_lost(int pid, std::string why, bool drain) {
    Peer& peer = peers_[static_cast<std::size_t>(pid)];
    if (peer.lost) return;
    if (drain) {
      for (;;) {
        std::span<std::byte> room = peer.inbox.room(kReadChunk);
        ssize_t got = ::recv(peer.fd, room.data(), room.size(), MSG_DONTWAIT);
        if (got > 0) {
          peer.inbox.grow(static_cast<std::size_t>(got));
          continue;
        }
        if (got < 0 && errno == EINTR) continue;
        break;
      }
    }
    peer.lost = true;
    peer.why = std::move(why);
    peer.queued.clear();
    peer.queued_start = 0;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, peer.fd, nullptr);
    losses_pending_ = true;
    std::uint64_t one = 1;
    while (::write(loss_fd_, &one, sizeof one) < 0 && errno == EINTR) {
    }
  }

  TransportConfig config_;
  std::string host_;
  int sndbuf_ = 0;
  int rcvbuf_ = 0;
  int setup_timeout_ms_ = kDefaultSetupTimeoutMs;
  int listen_fd_ = -1;
  int epoll_fd_ = -1;
  int loss_fd_ = -1;  // eventfd in the epoll set: readable while a loss waits to be reported
  bool losses_pending_ = false;
  std::vector<Peer> peers_;
  TcpSetupStats stats_;
};

const TransportRegistration kRegistration{"tcp", make_tcp_transport};

}  // namespace

std::unique_ptr<Transport> make_tcp_transport(const TransportConfig& config) {
  return std::make_unique<TcpTransport>(config);
}

TcpSetupStats tcp_setup_stats(const Transport& transport) {
  for (const Transport* layer = &transport; layer != nullptr; layer = layer->wrapped()) {
    if (const auto* tcp = dynamic_cast<const TcpTransport*>(layer)) return tcp->setup_stats();
  }
  return TcpSetupStats{};
}

}  // namespace bsp::transport
