// transport/tcp/tcp_transport.cc: the tcp transport (see tcp_transport.h): connections
// made on first use, limited in number, closed in order, frames kept in order per peer.
//
// Set-up. local_address() listens; connect() only records the peers' addresses and
// watches the listening socket, so a job starts without any connection. The first frame
// for a peer with no connection is held (bounded: kPendingLimit bytes, then send() is
// busy) and a non-blocking connect() is started; the handshake (tcp_handshake.h: the
// acceptor challenges, the dialer proves the secret and its pid, the acceptor proves
// itself back) is driven from receive(), like every accept, so nothing blocks. Once the
// welcome verifies, the held frames go first, in order. Timers (a dial to retry, a
// handshake's deadline) are a timerfd in the epoll set, so a waiter on wait_fd() wakes.
//
// Admission (every byte from a socket is hostile until the connection is proven): an
// accepted connection may send exactly the 28 bytes of a hello and is closed, counted as
// refused, when it stays silent for 2 s, claims a pid out of range or its own, or fails
// the MAC; at most kMaxUnproven wait at once (the oldest unproven is dropped). A dialed
// connection is adopted only if the challenge names the job and pid dialed and the
// welcome verifies; else it is closed and dialed again (backing off from 1 to 200 ms)
// until connect_timeout_ms after the first attempt, when the peer is reported lost
// naming its pid and the last failure. A refused connect() (nobody listens at the
// address, which every member does from local_address() until it ends) reports the peer
// lost at once.
//
// Two processes dialing each other at once: the connection dialed by the lower pid
// survives. The lower pid drops a proven hello from the higher one while its own dial
// to it holds a socket; the higher pid adopts the lower's connection and closes its own
// dial. Neither side sends a frame before the welcome, so nothing is lost either way. A
// proven connection is also dropped (the peer dials again, backing off) while a
// connection with that peer is open or closing, and when the link changed while it
// waited for a slot: it may be a dial the peer has given up.
//
// The limit (tcp_connections). Sockets of data connections and of dials in progress
// count. A dial that would exceed the limit waits for a slot; accepted connections are
// adopted up to twice the limit (so processes dialing each other in a cycle never wait
// on each other) and wait, welcome withheld, for up to 2 s beyond it. Whenever more
// are open or wanted than the limit, the least recently used connections (idle ones
// first: nothing queued either way) are closed in order:
//
//   closer -> peer   bye      (u32 0xFFFFFFFF in place of a frame length) after its
//                             queued frames; it sends nothing more on the connection
//   peer -> closer   bye-ack  (u32 0xFFFFFFFE) after the peer's own queued frames
//
// Either marker means "nothing more from me on this connection"; a side closes its socket
// once it has sent its marker, received the other's, and written everything queued, so
// no frame in flight is lost and neither side sees a loss (two byes crossing close it as
// well). Frames sent meanwhile are held and go through a new connection, dialed once the
// old one is closed on the sender's side and adopted by the receiver only once its side
// is closed too, so a peer's frames are delivered in the order sent.
// End of file before the peer's marker is a loss, as is a byte after it.
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
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
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
#include "transport/tcp/byte_buffer.h"
#include "transport/tcp/tcp_handshake.h"

namespace bsp::transport {
namespace {

using namespace tcp;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using Fd = FileDescriptor;

constexpr std::size_t kTcpMtu = 65536;             // largest frame
constexpr std::size_t kReadChunk = 256 * 1024;     // bytes asked of the kernel per recv
constexpr std::size_t kDirectPollPeers = 2;        // up to this many peers: recv each, no epoll
constexpr std::size_t kPendingLimit = 256 * 1024;  // bytes held for a peer not yet connected
constexpr std::size_t kPlaceFrom = 16 * 1024;      // frames from this long may be read into the sink's memory
constexpr std::uint32_t kByeMark = 0xFFFFFFFFu;     // in place of a frame length: closing
constexpr std::uint32_t kByeAckMark = 0xFFFFFFFEu;  // the answer to a bye

constexpr int kDefaultConnectTimeoutMs = 60000;    // a connection to be made and proven
constexpr milliseconds kHandshakeDeadline{2000};   // an accepted connection, to prove itself
constexpr std::size_t kMaxUnproven = 64;           // accepted, not adopted (or p, if more); oldest dropped
constexpr milliseconds kFirstRetry{1};             // dial again after a failure, doubling
constexpr milliseconds kMaxRetry{200};
constexpr milliseconds kAcceptPause{10};           // out of descriptors: accept again after
constexpr std::size_t kOtherDescriptors = 256;     // kept for the rest of the process

// epoll tags: kind << 32 | value. Sockets of a peer carry its pid and a generation, so
// an event of a socket closed earlier in the same batch is not taken for its successor.
enum Kind : std::uint32_t { kLossEvent = 1, kListener, kTimer, kData, kDial, kIncoming };
std::uint64_t tag(Kind kind, std::uint32_t value) { return (std::uint64_t{kind} << 32) | value; }
std::uint32_t peer_value(int pid, std::uint16_t generation) {
  return static_cast<std::uint32_t>(pid) | (std::uint32_t{generation} << 16);
}

std::runtime_error system_error(const std::string& what) {
  return std::runtime_error(fmt::format("tcp transport: {}: {}", what, std::strerror(errno)));
}

void append(std::vector<std::byte>& queue, std::uint32_t word) {
  const auto* bytes = reinterpret_cast<const std::byte*>(&word);
  queue.insert(queue.end(), bytes, bytes + 4);
}

// The state of this process's link to one peer.
enum class Link {
  none,     // no connection: the first frame sent starts a dial
  dialing,  // a dial in progress (or waiting to retry, or for a slot under the limit)
  open,     // a proven connection carries frames both ways
  closing,  // a marker was sent or received: read until the peer's, write what is queued
};

// This process dialing a peer.
struct Dial {
  enum class Step { slot, waiting, connecting, challenge, welcome };
  Step step = Step::slot;
  Fd fd;
  Clock::time_point deadline{};  // connect_timeout_ms after the first attempt
  Clock::time_point retry_at{};
  milliseconds backoff = kFirstRetry;
  Challenge challenge{};
  Welcome welcome{};
  std::size_t have = 0;
  Nonce own_nonce{};
  std::string problem;  // the last attempt's failure, for the loss's message
  bool holds_socket() const { return fd.get() >= 0; }
};

struct Peer {
  Link link = Link::none;
  int fd = -1;  // the data connection, while open or closing
  std::uint16_t generation = 0;
  std::uint64_t epoch = 0;  // counts connections adopted and ended: what a waiting connection was judged in
  std::uint32_t events = 0;  // what epoll watches on fd
  Dial dial;
  bool sent_marker = false, got_marker = false, eof = false;
  bool lost = false, loss_reported = false;
  std::string why;                  // the loss, once lost
  ByteBuffer inbox;                 // bytes read, not yet handed out as frames
  // A large frame being read straight into memory its sink named (FrameSink::place_frame):
  // the room for its tail, how much of it has arrived, and its head.
  std::span<std::byte> placing;
  std::size_t placed = 0;
  std::vector<std::byte> placing_head;
  bool bulk = false;  // the last frame was large: read only through the next one's head first
  std::vector<std::byte> queued;    // bytes for the connection the kernel did not take yet
  std::size_t queued_start = 0;
  std::vector<std::byte> pending;   // frames for the next connection
  bool in_backlog = false;          // in TcpTransport::backlog_
  bool in_buffered = false;         // in TcpTransport::buffered_
  std::uint64_t last_used = 0;      // for closing the least recently used
  sockaddr_in address{};
  bool has_address = false;
  std::string address_text;
};

// A connection accepted on the listening port and not adopted yet.
struct Incoming {
  Fd fd;
  Clock::time_point deadline;
  Nonce nonce{};
  Hello hello{};
  std::size_t have = 0;
  int proven_pid = -1;  // hello verified; waiting (welcome withheld) for a slot
  std::uint64_t epoch = 0;  // the peer's link epoch when the hello verified
};

class TcpTransport final : public Transport {
 public:
  explicit TcpTransport(const TransportConfig& config)
      : config_(config), peers_(static_cast<std::size_t>(std::max(config.nprocs, 1))) {
    auto option = [&](const char* key, const std::string& fallback) {
      auto found = config.options.find(key);
      return found == config.options.end() ? fallback : found->second;
    };
    host_ = option("host", "127.0.0.1");
    sndbuf_ = std::stoi(option("sndbuf", "0"));
    rcvbuf_ = std::stoi(option("rcvbuf", "0"));
    connect_timeout_ms_ = std::stoi(option("connect_timeout_ms", std::to_string(kDefaultConnectTimeoutMs)));
    if (connect_timeout_ms_ <= 0) {
      throw std::runtime_error(fmt::format("tcp transport: connect_timeout_ms={} must be positive", connect_timeout_ms_));
    }
    long limit = std::stol(option("tcp_connections", std::to_string(default_tcp_connections())));
    if (limit < 1) throw std::runtime_error(fmt::format("tcp transport: tcp_connections={} must be at least 1", limit));
    limit_ = static_cast<std::size_t>(limit);
  }

  ~TcpTransport() override {
    for (Peer& peer : peers_) {
      if (peer.fd >= 0) ::close(peer.fd);
    }
    for (int fd : {listen_fd_, epoll_fd_, loss_fd_, timer_fd_}) {
      if (fd >= 0) ::close(fd);
    }
  }

  std::string_view name() const override { return "tcp"; }
  // Every connection proved the job's secret and its pid when it was set up (the
  // handshake), so frames need no MAC of their own.
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

  // Records the addresses and starts watching the listening socket: no connection yet.
  void connect(const std::vector<std::string>& addresses) override {
    const int nprocs = static_cast<int>(addresses.size());
    if (config_.pid < 0 || config_.pid >= nprocs) {
      throw std::runtime_error(fmt::format("tcp transport: pid {} is not among the {} addresses", config_.pid, nprocs));
    }
    if (nprocs > 0xFFFF) throw std::runtime_error(fmt::format("tcp transport: {} processes are too many", nprocs));
    if (listen_fd_ < 0 && nprocs > 1) throw std::runtime_error("tcp transport: connect() before local_address()");
    peers_.resize(static_cast<std::size_t>(nprocs));
    // Every peer may dial at once (a superstep that talks to all): that is no flood.
    max_unproven_ = std::max(kMaxUnproven, std::min(static_cast<std::size_t>(nprocs), limit_));
    for (int pid = 0; pid < nprocs; ++pid) {
      // A hybrid gives the network transport every address; a peer it reaches otherwise
      // is never sent to, so an address that does not parse matters only if it is.
      Peer& peer = peers_[static_cast<std::size_t>(pid)];
      peer.address_text = addresses[static_cast<std::size_t>(pid)];
      peer.has_address = pid != config_.pid && parse_address(peer.address_text, peer.address);
    }
    epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
    if (epoll_fd_ < 0) throw system_error("epoll_create1");
    loss_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (loss_fd_ < 0) throw system_error("eventfd");
    timer_fd_ = ::timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    if (timer_fd_ < 0) throw system_error("timerfd_create");
    if (!watch(loss_fd_, EPOLLIN, tag(kLossEvent, 0)) || !watch(timer_fd_, EPOLLIN, tag(kTimer, 0)) ||
        (listen_fd_ >= 0 && !watch(listen_fd_, EPOLLIN, tag(kListener, 0)))) {
      throw system_error("epoll_ctl");
    }
  }

  SendStatus send(int peer_pid, std::span<const std::byte> frame) override {
    return send_gathered(peer_pid, frame, {});
  }

  // [u32 length][head][body] in one sendmsg, the body from where the caller keeps it.
  SendStatus send_gathered(int peer_pid, std::span<const std::byte> head, std::span<const std::byte> body) override {
    Peer& peer = peers_[static_cast<std::size_t>(peer_pid)];
    if (peer.lost) return SendStatus::sent;  // reported by receive(); drop quietly
    peer.last_used = ++tick_;
    if (peer.link != Link::open) return hold(peer_pid, head, body);
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
      note_backlog(peer_pid);
      set_events(peer_pid);
    }
    return SendStatus::sent;
  }

  std::size_t receive(FrameSink& sink, std::size_t max_frames) override {
    place_head_ = sink.placement_head();
    std::size_t delivered = 0;
    // Frames already buffered from an earlier read come first: those of the peers whose
    // last delivery ran out of budget (buffered_), not a walk over all p.
    if (!buffered_.empty()) {
      take(buffered_, visiting_, &Peer::in_buffered);
      for (int pid : visiting_) {
        if (delivered < max_frames) {
          delivered += deliver(pid, sink, max_frames - delivered);  // lists pid again if frames are left
        } else {
          note_buffered(pid);
        }
      }
      visiting_.clear();
    }
    if (delivered < max_frames) {
      bool direct = peers_.size() <= kDirectPollPeers + 1 && all_open();
      if (direct) {
        // Few peers, all connected: asking each socket costs fewer system calls than
        // epoll + recv. Set-up events (a stranger, a timer) are looked at when idle.
        for (int pid = 0; pid < static_cast<int>(peers_.size()); ++pid) {
          if (pid != config_.pid) delivered += read_and_deliver(pid, sink, max_frames, delivered);
        }
      }
      if (!direct || delivered == 0) delivered += poll_events(sink, max_frames, delivered);
    }
    if (setup_active()) service(Clock::now());
    return delivered + report_losses(sink);
  }

  // Pushes what waits for the kernel: the peers with bytes queued or held (backlog_).
  bool flush() override {
    bool drained = true;
    take(backlog_, flushing_, &Peer::in_backlog);
    for (int pid : flushing_) {
      Peer& peer = peers_[static_cast<std::size_t>(pid)];
      if (peer.lost) continue;
      if (!peer.queued.empty()) drained &= flush_peer(pid);
      if (!peer.pending.empty() && !peer.lost) drained = false;  // its connection is being made
      if (!peer.lost && (!peer.queued.empty() || !peer.pending.empty())) note_backlog(pid);
    }
    flushing_.clear();
    return drained;
  }

  int wait_fd() const override { return epoll_fd_; }

  const TcpSetupStats& setup_stats() const { return stats_; }

 private:
  // ---------------------------------------------------------------- holding and dialing

  // A frame for a peer without an open connection: held for the next one.
  SendStatus hold(int pid, std::span<const std::byte> head, std::span<const std::byte> body) {
    Peer& peer = peers_[static_cast<std::size_t>(pid)];
    if (peer.pending.size() >= kPendingLimit) return SendStatus::busy;
    append(peer.pending, static_cast<std::uint32_t>(head.size() + body.size()));
    peer.pending.insert(peer.pending.end(), head.begin(), head.end());
    peer.pending.insert(peer.pending.end(), body.begin(), body.end());
    note_backlog(pid);
    if (peer.link == Link::none) request_connection(pid, Clock::now());
    return SendStatus::sent;
  }

  void request_connection(int pid, Clock::time_point now) {
    Peer& peer = peers_[static_cast<std::size_t>(pid)];
    if (!peer.has_address) {
      return mark_lost(pid, fmt::format("no tcp address for it ('{}')", peer.address_text), false);
    }
    peer.link = Link::dialing;
    peer.dial = Dial{};
    peer.dial.deadline = now + milliseconds(connect_timeout_ms_);
    dialing_.push_back(pid);
    try_dial(pid, now);
  }

  // Opens a non-blocking connection to pid if the limit allows; else waits for a slot.
  void try_dial(int pid, Clock::time_point now) {
    Peer& peer = peers_[static_cast<std::size_t>(pid)];
    Dial& dial = peer.dial;
    if (sockets_ >= limit_) {
      dial.step = Dial::Step::slot;
      make_room();
      return;
    }
    dial.fd = Fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!dial.fd) {
      return dial_failed(pid, fmt::format("socket: {}", std::strerror(errno)), false, now);
    }
    count_socket(+1);
    tune(dial.fd.get());
    dial.have = 0;
    ++peer.generation;
    int result;
    do {
      result = ::connect(dial.fd.get(), reinterpret_cast<const sockaddr*>(&peer.address), sizeof peer.address);
    } while (result < 0 && errno == EINTR);
    if (result < 0 && errno != EINPROGRESS) {
      return dial_failed(pid, fmt::format("connect: {}", std::strerror(errno)), errno == ECONNREFUSED, now);
    }
    dial.step = result == 0 ? Dial::Step::challenge : Dial::Step::connecting;
    if (!watch(dial.fd.get(), result == 0 ? EPOLLIN : EPOLLOUT, tag(kDial, peer_value(pid, peer.generation)))) {
      return dial_failed(pid, fmt::format("epoll_ctl: {}", std::strerror(errno)), false, now);
    }
  }

  void close_dial_socket(Dial& dial) {
    if (dial.fd) {
      dial.fd.reset();  // closing removes it from the epoll set
      count_socket(-1);
    }
  }

  // This attempt failed: try again after a back-off, or report the peer lost once the
  // connect timeout has passed (at once when nobody listens at its address: it is gone).
  void dial_failed(int pid, std::string problem, bool nobody_listens, Clock::time_point now = Clock::now()) {
    Peer& peer = peers_[static_cast<std::size_t>(pid)];
    Dial& dial = peer.dial;
    close_dial_socket(dial);
    dial.problem = std::move(problem);
    if (nobody_listens) {
      return mark_lost(pid, fmt::format("nobody listens at {} any more ({})", peer.address_text, dial.problem), false);
    }
    if (now >= dial.deadline) return lose_dial(pid);
    dial.step = Dial::Step::waiting;
    dial.retry_at = now + dial.backoff;
    dial.backoff = std::min(dial.backoff * 2, kMaxRetry);
    serve_waiters(now);  // the socket it held may be another dial's slot
  }

  void lose_dial(int pid) {
    Peer& peer = peers_[static_cast<std::size_t>(pid)];
    mark_lost(pid,
              fmt::format("no connection to {} within {:g} s ({})", peer.address_text, connect_timeout_ms_ / 1000.0,
                          peer.dial.problem.empty() ? "no answer" : peer.dial.problem),
              false);
  }

  void unproven_peer(int pid, std::string problem) {
    Peer& peer = peers_[static_cast<std::size_t>(pid)];
    ++stats_.unproven_peers;
    stats_.last_refusal = fmt::format("the process at {} (dialed as pid {}) {}", peer.address_text, pid, problem);
    note_refusal();
    dial_failed(pid, std::move(problem), false);
  }

  void progress_dial(int pid) {
    Peer& peer = peers_[static_cast<std::size_t>(pid)];
    Dial& dial = peer.dial;
    if (peer.link != Link::dialing || !dial.holds_socket()) return;
    std::string why;
    switch (dial.step) {
      case Dial::Step::connecting: {
        int error = 0;
        socklen_t length = sizeof error;
        ::getsockopt(dial.fd.get(), SOL_SOCKET, SO_ERROR, &error, &length);
        if (error != 0) return dial_failed(pid, fmt::format("connect: {}", std::strerror(error)), error == ECONNREFUSED);
        dial.step = Dial::Step::challenge;
        modify(dial.fd.get(), EPOLLIN, tag(kDial, peer_value(pid, peer.generation)));
        return;
      }
      case Dial::Step::challenge: {
        Got got = read_exact(dial.fd.get(), dial.challenge, dial.have, why);
        if (got == Got::failed) return dial_failed(pid, fmt::format("it {} before its challenge", why), false);
        if (got == Got::partial) return;
        ChallengeFields fields = read_challenge(dial.challenge);
        if (fields.job_id != config_.job_id || fields.acceptor != pid) {
          return unproven_peer(pid, fmt::format("says it is pid {} of job {:#x}, not pid {} of job {:#x}",
                                                fields.acceptor, fields.job_id, pid, config_.job_id));
        }
        auth::random_bytes(dial.own_nonce);
        Hello hello = make_hello(config_.secret, config_.job_id, config_.pid, pid, fields.nonce, dial.own_nonce);
        if (!send_whole(dial.fd.get(), hello)) return dial_failed(pid, "sending the hello failed", false);
        dial.have = 0;
        dial.step = Dial::Step::welcome;
        return;
      }
      case Dial::Step::welcome: {
        Got got = read_exact(dial.fd.get(), dial.welcome, dial.have, why);
        if (got == Got::failed) {
          return dial_failed(pid,
                             fmt::format("it {} instead of welcoming pid {} (a different secret, or it chose "
                                         "another connection)",
                                         why, config_.pid),
                             false);
        }
        if (got == Got::partial) return;
        ChallengeFields fields = read_challenge(dial.challenge);
        if (!welcome_verifies(config_.secret, config_.job_id, pid, config_.pid, dial.own_nonce, fields.nonce,
                              dial.welcome)) {
          return unproven_peer(pid, "answered with a welcome that fails the job's secret");
        }
        int fd = dial.fd.release();  // stays counted: now the data connection's socket
        return adopt(pid, fd);
      }
      case Dial::Step::slot:
      case Dial::Step::waiting:
        return;
    }
  }

  // ---------------------------------------------------------------- accepting

  void accept_all(Clock::time_point now) {
    for (;;) {
      int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
          // Out of descriptors: stop watching the listener for a moment instead of
          // waking up for it again and again (pending connections wait in the backlog).
          ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, listen_fd_, nullptr);
          listener_paused_until_ = now + kAcceptPause;
          listener_paused_ = true;
        }
        return;  // EAGAIN: none left
      }
      Incoming connection;
      connection.fd = Fd(fd);
      connection.deadline = now + kHandshakeDeadline;
      auth::random_bytes(connection.nonce);
      if (!send_whole(fd, make_challenge(config_.job_id, config_.pid, connection.nonce))) {
        refuse(connection, "a connection broke before it could be challenged", false);
        continue;
      }
      if (!watch(fd, EPOLLIN, tag(kIncoming, static_cast<std::uint32_t>(fd)))) {
        refuse(connection, fmt::format("epoll_ctl: {}", std::strerror(errno)));
        continue;
      }
      if (incoming_.size() >= max_unproven_) {
        // Many unproven at once: a flood. Keep the newest (real peers answer in
        // microseconds, so the oldest are the silent ones); proven ones stay.
        auto oldest = std::find_if(incoming_.begin(), incoming_.end(),
                                   [](const Incoming& c) { return c.fd && c.proven_pid < 0; });
        if (oldest != incoming_.end()) {
          refuse(*oldest, fmt::format("more than {} connections were unproven at once", max_unproven_));
        }
        std::erase_if(incoming_, [](const Incoming& c) { return !c.fd; });
      }
      incoming_.push_back(std::move(connection));
    }
  }

  // Reads a hello; once it verifies, decides what becomes of the connection.
  void progress_incoming(Incoming& connection, Clock::time_point now) {
    if (!connection.fd || connection.proven_pid >= 0) return;
    std::string why;
    Got got = read_exact(connection.fd.get(), connection.hello, connection.have, why);
    if (got == Got::failed) {
      if (connection.have == 0 && (why == "closed the connection" || why == std::strerror(ECONNRESET))) {
        // Closed before saying anything: a peer that gave up this dial because it
        // adopted the connection this process dialed (or a stranger that left).
        ++stats_.abandoned_connections;
        connection.fd.reset();
        return;
      }
      return refuse(connection, fmt::format("a connection {} after {} bytes of its hello", why, connection.have));
    }
    if (got == Got::partial) return;
    const int nprocs = static_cast<int>(peers_.size());
    int pid = hello_pid(connection.hello);
    if (pid < 0 || pid >= nprocs || pid == config_.pid) {
      return refuse(connection, fmt::format("a connection claimed pid {}, which is no peer of pid {} (job of {})", pid,
                                            config_.pid, nprocs));
    }
    if (!hello_verifies(config_.secret, config_.job_id, pid, config_.pid, connection.nonce, connection.hello)) {
      return refuse(connection, fmt::format("a connection claiming pid {} failed the job's secret", pid));
    }
    connection.proven_pid = pid;
    connection.epoch = peers_[static_cast<std::size_t>(pid)].epoch;
    connection.deadline = now + kHandshakeDeadline;
    // Nothing more is read from it until it is adopted: a hostile peer's bytes stay in
    // the kernel, and a level-triggered socket would wake every wait.
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, connection.fd.get(), nullptr);
    decide(connection, now);
  }

  // A proven connection from connection.proven_pid: adopt it, drop it, or keep it
  // waiting (welcome withheld) for a slot. The decision may be put off only while the
  // link stays as it was when the hello verified (the same epoch): a connection from
  // before this process's latest connection with the peer may be one the peer has
  // since given up (it adopted ours instead), and welcoming it would lose the peer.
  void decide(Incoming& connection, Clock::time_point now) {
    const int pid = connection.proven_pid;
    Peer& peer = peers_[static_cast<std::size_t>(pid)];
    if (peer.lost) return drop(connection, "its pid was lost");
    if (connection.epoch != peer.epoch) return drop(connection, "the link changed while it waited");
    switch (peer.link) {
      case Link::open:
        return drop(connection, "a connection is open");
      case Link::closing:
        // The peer dials again once its side is closed; frames of a new connection
        // must not overtake the old one's, so it waits (backing off) until ours is.
        return drop(connection, "the old connection is still closing");
      case Link::dialing:
        if (peer.dial.holds_socket()) {
          // Both dialed at once: the lower pid's connection survives.
          if (config_.pid < pid) return drop(connection, "both dialed: ours survives");
          ++stats_.crossed_connections;
          close_dial_socket(peer.dial);
          return welcome(connection, now);
        }
        [[fallthrough]];
      case Link::none:
        if (sockets_ < 2 * limit_) return welcome(connection, now);
        make_room();
        return;
    }
  }

  // A proven connection that is not adopted: the peer dials again if it still needs to.
  void drop(Incoming& connection, std::string_view why) {
    ++stats_.crossed_connections;
    connection.fd.reset();
  }

  void welcome(Incoming& connection, Clock::time_point now) {
    const int pid = connection.proven_pid;
    Nonce dialer_nonce = hello_nonce(connection.hello);
    if (!send_whole(connection.fd.get(),
                    make_welcome(config_.secret, config_.job_id, config_.pid, pid, dialer_nonce, connection.nonce))) {
      connection.fd.reset();  // pid's connection broke; it dials again
      return;
    }
    count_socket(+1);
    adopt(pid, connection.fd.release());
    if (sockets_ > limit_) make_room();
    (void)now;
  }

  void refuse(Incoming& connection, std::string why, bool say = true) {
    ++stats_.refused_connections;
    stats_.last_refusal = std::move(why);
    if (say) note_refusal();
    connection.fd.reset();
  }

  // Says the first refusal on standard error (the rest are counted in the statistics).
  void note_refusal() {
    if (refusal_said_) return;
    refusal_said_ = true;
    std::fprintf(stderr, "tcp transport: pid %d refused a connection: %s\n", config_.pid, stats_.last_refusal.c_str());
  }

  // ---------------------------------------------------------------- connections

  // pid's connection is proven: its held frames go first.
  void adopt(int pid, int fd) {
    Peer& peer = peers_[static_cast<std::size_t>(pid)];
    tune(fd);
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    std::erase(dialing_, pid);
    peer.dial = Dial{};
    peer.link = Link::open;
    peer.fd = fd;
    ++peer.generation;
    ++peer.epoch;
    peer.sent_marker = peer.got_marker = peer.eof = false;
    peer.events = 0;
    peer.last_used = ++tick_;
    ++stats_.connections_opened;
    stats_.connections_open = ++data_connections_;
    stats_.peak_connections = std::max(stats_.peak_connections, data_connections_);
    if (!peer.pending.empty()) {
      if (peer.queued.empty()) {
        peer.queued.swap(peer.pending);
      } else {
        peer.queued.insert(peer.queued.end(), peer.pending.begin(), peer.pending.end());
      }
      peer.pending.clear();
    }
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.u64 = tag(kData, peer_value(pid, peer.generation));
    if (::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd, &event) < 0 && ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event) < 0) {
      return mark_lost(pid, fmt::format("epoll_ctl: {}", std::strerror(errno)), false);
    }
    peer.events = EPOLLIN;
    if (!peer.queued.empty()) flush_peer(pid);
    make_room();  // dials or connections may be waiting for a slot this one took
  }

  // Closes connections, least recently used first (idle ones before busy ones), until
  // what stays open or is wanted fits the limit once the closes under way finish.
  void make_room() {
    std::size_t wanted = static_cast<std::size_t>(std::count_if(dialing_.begin(), dialing_.end(), [&](int pid) {
      return peers_[static_cast<std::size_t>(pid)].dial.step == Dial::Step::slot;
    }));
    wanted += static_cast<std::size_t>(
        std::count_if(incoming_.begin(), incoming_.end(), [](const Incoming& c) { return c.fd && c.proven_pid >= 0; }));
    std::size_t staying = sockets_ - closing_;
    while (staying + wanted > limit_) {
      int victim = -1;
      bool victim_idle = false;
      for (int pid = 0; pid < static_cast<int>(peers_.size()); ++pid) {
        const Peer& peer = peers_[static_cast<std::size_t>(pid)];
        if (peer.link != Link::open || peer.lost) continue;
        bool idle = peer.queued.empty() && peer.inbox.empty() && peer.placing.empty();
        if (victim < 0 || (idle && !victim_idle) ||
            (idle == victim_idle && peer.last_used < peers_[static_cast<std::size_t>(victim)].last_used)) {
          victim = pid;
          victim_idle = idle;
        }
      }
      if (victim < 0) return;  // nothing open: dials and closes under way free the slots
      begin_close(victim);
      --staying;
    }
  }

  void begin_close(int pid) {
    Peer& peer = peers_[static_cast<std::size_t>(pid)];
    peer.link = Link::closing;
    ++closing_;
    append(peer.queued, kByeMark);
    note_backlog(pid);
    peer.sent_marker = true;
    flush_peer(pid);
  }

  // The peer's bye or bye-ack: it sends nothing more on this connection.
  void on_marker(int pid, bool bye) {
    Peer& peer = peers_[static_cast<std::size_t>(pid)];
    if (peer.lost) return;
    if (peer.link != Link::open && peer.link != Link::closing) return;
    if (!bye && !peer.sent_marker) {
      return mark_lost(pid, "it answered a bye that was never sent", false);
    }
    peer.got_marker = true;
    if (!peer.inbox.empty()) return mark_lost(pid, "it sent bytes after closing the connection", false);
    if (peer.link == Link::open) {
      peer.link = Link::closing;
      ++closing_;
    }
    if (!peer.sent_marker) {
      append(peer.queued, kByeAckMark);  // after this side's own queued frames
      note_backlog(pid);
      peer.sent_marker = true;
    }
    if (!peer.queued.empty()) {
      flush_peer(pid);  // finishes the close once written
    } else {
      maybe_finish_close(pid);
    }
  }

  void maybe_finish_close(int pid) {
    Peer& peer = peers_[static_cast<std::size_t>(pid)];
    if (peer.lost || peer.link != Link::closing || !peer.sent_marker || !peer.got_marker || !peer.queued.empty()) {
      set_events(pid);
      return;
    }
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, peer.fd, nullptr);
    ::close(peer.fd);
    peer.fd = -1;
    peer.events = 0;
    peer.link = Link::none;
    ++peer.epoch;
    peer.sent_marker = peer.got_marker = peer.eof = false;
    peer.inbox.release();
    std::vector<std::byte>().swap(peer.queued);
    peer.queued_start = 0;
    --closing_;
    stats_.connections_open = --data_connections_;
    ++stats_.connections_closed;
    count_socket(-1);
    Clock::time_point now = Clock::now();
    if (!peer.pending.empty()) request_connection(pid, now);
    serve_waiters(now);
  }

  // A slot may be free, or an old connection closed: dials waiting for a slot and
  // proven connections waiting for either get their turn.
  void serve_waiters(Clock::time_point now) {
    for (std::size_t i = 0; i < dialing_.size() && sockets_ < limit_; ++i) {
      int pid = dialing_[i];
      if (peers_[static_cast<std::size_t>(pid)].dial.step == Dial::Step::slot) try_dial(pid, now);
    }
    for (Incoming& connection : incoming_) {
      if (connection.fd && connection.proven_pid >= 0) decide(connection, now);
    }
  }

  // ---------------------------------------------------------------- timers

  bool setup_active() const { return !dialing_.empty() || !incoming_.empty() || listener_paused_; }

  // Retries, deadlines, waiting connections; then arms the timer for the next of them.
  void service(Clock::time_point now) {
    if (listener_paused_ && now >= listener_paused_until_) {
      listener_paused_ = false;
      watch(listen_fd_, EPOLLIN, tag(kListener, 0));
    }
    std::vector<int> dialing = dialing_;  // dials may finish (or be lost) meanwhile
    for (int pid : dialing) {
      Peer& peer = peers_[static_cast<std::size_t>(pid)];
      if (peer.link != Link::dialing || peer.lost) continue;
      Dial& dial = peer.dial;
      if (now >= dial.deadline) {
        close_dial_socket(dial);
        lose_dial(pid);
      } else if (dial.step == Dial::Step::waiting && dial.retry_at <= now) {
        try_dial(pid, now);
      } else if (dial.step == Dial::Step::slot && sockets_ < limit_) {
        try_dial(pid, now);
      }
    }
    for (Incoming& connection : incoming_) {
      if (!connection.fd) continue;
      if (connection.deadline <= now) {
        if (connection.proven_pid >= 0) {
          drop(connection, "no slot within the handshake deadline");
        } else {
          std::string said = connection.have == 0 ? "nothing" : fmt::format("{} bytes", connection.have);
          refuse(connection, fmt::format("a connection said {} of its {}-byte hello in {} ms", said, kHelloSize,
                                         kHandshakeDeadline.count()));
        }
      } else if (connection.proven_pid >= 0) {
        decide(connection, now);
      }
    }
    std::erase_if(incoming_, [](const Incoming& connection) { return !connection.fd; });
    make_room();
    arm_timer();
  }

  void arm_timer() {
    Clock::time_point next = Clock::time_point::max();
    for (int pid : dialing_) {
      const Dial& dial = peers_[static_cast<std::size_t>(pid)].dial;
      next = std::min(next, dial.deadline);
      if (dial.step == Dial::Step::waiting) next = std::min(next, dial.retry_at);
    }
    for (const Incoming& connection : incoming_) next = std::min(next, connection.deadline);
    if (listener_paused_) next = std::min(next, listener_paused_until_);
    if (next == timer_at_) return;
    timer_at_ = next;
    itimerspec when{};
    if (next != Clock::time_point::max()) {
      auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(next.time_since_epoch()).count();
      if (ns <= 0) ns = 1;
      when.it_value.tv_sec = static_cast<time_t>(ns / 1000000000);
      when.it_value.tv_nsec = static_cast<long>(ns % 1000000000);
    }
    ::timerfd_settime(timer_fd_, TFD_TIMER_ABSTIME, &when, nullptr);  // all zero: disarmed
  }

  // ---------------------------------------------------------------- data path

  bool all_open() const {
    for (int pid = 0; pid < static_cast<int>(peers_.size()); ++pid) {
      if (pid != config_.pid && peers_[static_cast<std::size_t>(pid)].link != Link::open) return false;
    }
    return true;
  }

  std::size_t poll_events(FrameSink& sink, std::size_t max_frames, std::size_t used) {
    std::size_t delivered = 0;
    epoll_event events[64];
    int ready = ::epoll_wait(epoll_fd_, events, 64, 0);
    Clock::time_point now{};
    for (int i = 0; i < ready; ++i) {
      auto kind = static_cast<Kind>(events[i].data.u64 >> 32);
      auto value = static_cast<std::uint32_t>(events[i].data.u64);
      int pid = static_cast<int>(value & 0xFFFF);
      auto generation = static_cast<std::uint16_t>(value >> 16);
      switch (kind) {
        case kLossEvent:
          break;  // report_losses()
        case kListener:
          if (now == Clock::time_point{}) now = Clock::now();
          accept_all(now);
          break;
        case kTimer: {
          std::uint64_t expirations;
          while (::read(timer_fd_, &expirations, sizeof expirations) < 0 && errno == EINTR) {
          }
          timer_at_ = Clock::time_point::max();  // fired: arm again
          break;
        }
        case kData: {
          if (pid >= static_cast<int>(peers_.size()) || peers_[static_cast<std::size_t>(pid)].generation != generation) break;
          if (events[i].events & EPOLLOUT) flush_peer(pid);
          if (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
            delivered += read_and_deliver(pid, sink, max_frames, used + delivered);
          }
          break;
        }
        case kDial:
          if (pid < static_cast<int>(peers_.size()) && peers_[static_cast<std::size_t>(pid)].generation == generation) {
            progress_dial(pid);
          }
          break;
        case kIncoming: {
          if (now == Clock::time_point{}) now = Clock::now();
          for (Incoming& connection : incoming_) {
            if (connection.fd.get() == static_cast<int>(value)) {
              progress_incoming(connection, now);
              break;
            }
          }
          break;
        }
      }
    }
    return delivered;
  }

  // What epoll watches on pid's data connection: input until its marker or end of file,
  // output while bytes wait.
  void set_events(int pid) {
    Peer& peer = peers_[static_cast<std::size_t>(pid)];
    if (peer.fd < 0 || peer.lost) return;
    std::uint32_t wanted = (peer.got_marker || peer.eof ? 0u : std::uint32_t{EPOLLIN}) |
                           (peer.queued.empty() ? 0u : std::uint32_t{EPOLLOUT});
    if (wanted == peer.events) return;
    peer.events = wanted;
    modify(peer.fd, wanted, tag(kData, peer_value(pid, peer.generation)));
  }

  // Pushes the peer's queued bytes; true when none are left.
  bool flush_peer(int pid) {
    Peer& peer = peers_[static_cast<std::size_t>(pid)];
    if (peer.fd < 0) return peer.queued.empty();
    while (!peer.lost && peer.queued_start < peer.queued.size()) {
      ssize_t sent = ::send(peer.fd, peer.queued.data() + peer.queued_start, peer.queued.size() - peer.queued_start,
                            MSG_NOSIGNAL | MSG_DONTWAIT);
      if (sent < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
          set_events(pid);
          return false;
        }
        mark_lost(pid, fmt::format("send: {}", std::strerror(errno)), true);
        break;
      }
      peer.queued_start += static_cast<std::size_t>(sent);
    }
    peer.queued.clear();
    peer.queued_start = 0;
    if (peer.lost) return true;
    if (peer.link == Link::closing) {
      maybe_finish_close(pid);
    } else {
      set_events(pid);
    }
    return true;
  }

  // Reads pid's socket and hands out its complete frames (within the max_frames budget,
  // of which `used` are spent). A loss is reported by report_losses().
  std::size_t read_and_deliver(int pid, FrameSink& sink, std::size_t max_frames, std::size_t used) {
    Peer& peer = peers_[static_cast<std::size_t>(pid)];
    std::size_t delivered = 0;
    // A placed frame that completes may be followed by more: read on (within the budget).
    while (read_from(pid)) {
      delivered += deliver(pid, sink, max_frames - std::min(used + delivered, max_frames));
      if (used + delivered >= max_frames) return delivered;
    }
    delivered += deliver(pid, sink, max_frames - std::min(used + delivered, max_frames));
    if (peer.eof && !peer.lost && peer.fd >= 0) {
      // The peer closed: what it sent before must be handed out (and its marker seen)
      // before its end of file can be judged.
      delivered += deliver(pid, sink, SIZE_MAX);
      settle_end_of_file(pid);
    }
    return delivered;
  }

  // End of file after the peer's marker closes the connection; before it, a loss.
  void settle_end_of_file(int pid) {
    Peer& peer = peers_[static_cast<std::size_t>(pid)];
    if (!peer.eof || peer.lost || peer.fd < 0) return;
    if (!peer.got_marker) return mark_lost(pid, "connection closed", false);
    if (!peer.queued.empty()) flush_peer(pid);
    if (peer.fd >= 0 && !peer.lost && !peer.queued.empty()) {
      mark_lost(pid, "it closed the connection before reading what was sent to it", false);
    }
  }

  // Reads what the kernel has for pid; marks the peer lost when the connection breaks.
  // While a frame is placed, its tail is read straight into the sink's room and only the
  // next frame's head into the inbox (so that frame may be placed too). True when a placed
  // frame is complete and more may be waiting (deliver it, then read again).
  bool read_from(int pid) {
    Peer& peer = peers_[static_cast<std::size_t>(pid)];
    if (peer.lost || peer.fd < 0 || peer.got_marker || peer.eof) return false;
    for (;;) {
      const bool placing = !peer.placing.empty();
      const std::size_t tail = placing ? peer.placing.size() - peer.placed : 0;
      const std::size_t want = placing ? 4 + place_head_ : bulk_read(peer);  // bounded: up to a frame's head
      const bool head_only = want != 0;
      std::span<std::byte> room = peer.inbox.room(head_only ? want : kReadChunk);
      iovec parts[2] = {{peer.placing.data() + peer.placed, tail}, {room.data(), head_only ? want : room.size()}};
      msghdr message{};
      message.msg_iov = placing ? parts : parts + 1;
      message.msg_iovlen = placing ? 2 : 1;
      ssize_t got = ::recvmsg(peer.fd, &message, MSG_DONTWAIT);
      if (got > 0) {
        std::size_t into_room = std::min(static_cast<std::size_t>(got), tail);
        peer.placed += into_room;
        peer.inbox.grow(static_cast<std::size_t>(got) - into_room);
        if (placing && peer.placed == peer.placing.size()) return true;
        if (static_cast<std::size_t>(got) < tail + parts[1].iov_len) return false;  // drained
        if (head_only) return true;  // a frame's head alone: deliver() may place the frame, then read on
        continue;
      }
      if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return false;
      if (got < 0 && errno == EINTR) continue;
      if (got == 0) {
        peer.eof = true;  // judged once the frames before it are handed out
        set_events(pid);
        return false;
      }
      mark_lost(pid, fmt::format("recv: {}", std::strerror(errno)), false);
      return false;
    }
  }

  std::size_t deliver(int pid, FrameSink& sink, std::size_t max_frames) {
    Peer& peer = peers_[static_cast<std::size_t>(pid)];
    std::size_t delivered = 0;
    if (!peer.placing.empty()) {
      if (peer.placed < peer.placing.size()) return 0;  // its tail is still coming
      if (max_frames == 0) {
        note_buffered(pid);
        return 0;
      }
      peer.placing = {};
      peer.placed = 0;
      sink.on_frame_placed(pid, peer.placing_head);
      ++delivered;
    }
    while (delivered < max_frames) {
      std::span<const std::byte> available = peer.inbox.bytes();
      if (available.size() < 4) break;
      std::uint32_t length;
      std::memcpy(&length, available.data(), 4);
      if (length == kByeMark || length == kByeAckMark) {
        peer.inbox.consume(4);
        on_marker(pid, length == kByeMark);
        if (peer.lost) peer.inbox.consume(peer.inbox.bytes().size());  // nothing after it counts
        break;
      }
      if (length > kTcpMtu) {
        mark_lost(pid, fmt::format("bad frame length {}", length), false);
        peer.inbox.consume(available.size());  // nothing after it can be framed
        break;
      }
      if (available.size() < 4 + length) {
        start_placing(pid, sink, length);
        break;
      }
      peer.bulk = length >= kPlaceFrom && place_head_ > 0;  // a large frame read whole: place the next one
      sink.on_frame(pid, available.subspan(4, length));
      peer.inbox.consume(4 + length);
      ++delivered;
    }
    if (delivered) peer.last_used = ++tick_;
    if (delivered >= max_frames && !peer.inbox.empty()) note_buffered(pid);  // out of budget: the next receive
    return delivered;
  }

  // The peers flush() and receive() visit (backlog_, buffered_), listed when their work
  // appears; in_list is the Peer's flag for the list.
  void note(int pid, std::vector<int>& list, bool Peer::*in_list) {
    bool& listed = peers_[static_cast<std::size_t>(pid)].*in_list;
    if (listed) return;
    listed = true;
    list.push_back(pid);
  }
  void note_backlog(int pid) { note(pid, backlog_, &Peer::in_backlog); }
  void note_buffered(int pid) { note(pid, buffered_, &Peer::in_buffered); }
  // Moves a list into `into` for a pass over it: its peers are no longer listed, so the
  // pass (or anything it calls) can list them again.
  void take(std::vector<int>& list, std::vector<int>& into, bool Peer::*in_list) {
    into.swap(list);
    for (int pid : into) peers_[static_cast<std::size_t>(pid)].*in_list = false;
  }

  // After a large frame, a peer is likely sending a run of them: read only up to the
  // next frame's head (through the rest of the frame in the inbox, if any), so deliver() can
  // place that frame before its tail is read. 0: read as much as the kernel has.
  std::size_t bulk_read(const Peer& peer) const {
    if (!peer.bulk || place_head_ == 0) return 0;
    std::span<const std::byte> available = peer.inbox.bytes();
    std::size_t through = 4 + place_head_;  // the head first: deliver() may place the frame
    if (available.size() >= through) {  // here and not placed: through its end and the next head
      std::uint32_t length;
      std::memcpy(&length, available.data(), 4);
      if (length > kTcpMtu) return 0;  // a marker, or a bad length deliver() reports
      through += 4 + length;
    }
    return through > available.size() ? through - available.size() : 0;
  }

  // The inbox holds the start of a frame of `length` bytes: a large one whose head is
  // here goes into the room the sink names, if it names one of the right size; what of its
  // tail already arrived is copied there now, the rest is read there by read_from().
  void start_placing(int pid, FrameSink& sink, std::uint32_t length) {
    Peer& peer = peers_[static_cast<std::size_t>(pid)];
    std::span<const std::byte> available = peer.inbox.bytes();
    if (place_head_ == 0 || length < kPlaceFrom || length <= place_head_ || available.size() < 4 + place_head_) return;
    std::span<const std::byte> head = available.subspan(4, place_head_);
    std::span<std::byte> room = sink.place_frame(pid, head, length);
    if (room.size() != length - place_head_) return;  // none (or a sink's mistake): read it whole
    peer.placing_head.assign(head.begin(), head.end());
    std::span<const std::byte> arrived = available.subspan(4 + place_head_);
    std::memcpy(room.data(), arrived.data(), arrived.size());  // fewer than length - place_head_ bytes
    peer.placing = room;
    peer.placed = arrived.size();
    peer.bulk = true;
    peer.inbox.consume(available.size());
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

  // The link to pid is gone: close its sockets and make wait_fd() readable until
  // receive() reports it. A loss found while sending first reads what the kernel still
  // holds from the peer, so frames it sent before going are not lost with it.
  void mark_lost(int pid, std::string why, bool drain) {
    Peer& peer = peers_[static_cast<std::size_t>(pid)];
    if (peer.lost) return;
    if (drain && peer.fd >= 0 && !peer.got_marker && peer.placing.empty()) {  // (after a cut frame nothing counts)
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
    peer.placing = {};  // a frame cut short is never delivered (the sink learns of the loss)
    peer.placed = 0;
    std::vector<std::byte>().swap(peer.queued);
    std::vector<std::byte>().swap(peer.pending);
    peer.queued_start = 0;
    if (peer.fd >= 0) {
      ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, peer.fd, nullptr);
      ::close(peer.fd);
      peer.fd = -1;
      stats_.connections_open = --data_connections_;
      count_socket(-1);
    }
    if (peer.link == Link::closing) --closing_;
    if (peer.link == Link::dialing) {
      close_dial_socket(peer.dial);
      std::erase(dialing_, pid);
    }
    peer.link = Link::none;
    ++peer.epoch;
    losses_pending_ = true;
    std::uint64_t one = 1;
    while (::write(loss_fd_, &one, sizeof one) < 0 && errno == EINTR) {
    }
  }

  // ---------------------------------------------------------------- helpers

  void count_socket(int change) { sockets_ = static_cast<std::size_t>(static_cast<long>(sockets_) + change); }

  bool watch(int fd, std::uint32_t events, std::uint64_t value) {
    epoll_event event{};
    event.events = events;
    event.data.u64 = value;
    return ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event) == 0;
  }

  void modify(int fd, std::uint32_t events, std::uint64_t value) {
    epoll_event event{};
    event.events = events;
    event.data.u64 = value;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd, &event);
  }

  static bool parse_address(const std::string& address, sockaddr_in& target) {
    auto colon = address.rfind(':');
    target = sockaddr_in{};
    target.sin_family = AF_INET;
    int port = -1;
    try {
      if (colon != std::string::npos) port = std::stoi(address.substr(colon + 1));
    } catch (const std::exception&) {
    }
    if (colon == std::string::npos || port <= 0 || port > 65535 ||
        ::inet_pton(AF_INET, address.substr(0, colon).c_str(), &target.sin_addr) != 1) {
      return false;
    }
    target.sin_port = htons(static_cast<std::uint16_t>(port));
    return true;
  }

  void tune(int fd) {
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (sndbuf_ > 0) ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf_, sizeof sndbuf_);
    if (rcvbuf_ > 0) ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf_, sizeof rcvbuf_);
  }

  TransportConfig config_;
  std::string host_;
  int sndbuf_ = 0;
  int rcvbuf_ = 0;
  int connect_timeout_ms_ = kDefaultConnectTimeoutMs;
  std::size_t limit_ = 1;
  std::size_t max_unproven_ = kMaxUnproven;
  std::size_t place_head_ = 0;  // the sink's FrameSink::placement_head() (0: it places nothing)
  int listen_fd_ = -1;
  int epoll_fd_ = -1;
  int loss_fd_ = -1;   // eventfd in the epoll set: readable while a loss waits to be reported
  int timer_fd_ = -1;  // timerfd in the epoll set: the next retry or deadline
  Clock::time_point timer_at_ = Clock::time_point::max();
  bool listener_paused_ = false;
  Clock::time_point listener_paused_until_{};
  bool losses_pending_ = false;
  bool refusal_said_ = false;
  std::vector<Peer> peers_;
  std::vector<int> dialing_;        // pids whose link is dialing
  std::vector<int> backlog_;        // pids with bytes queued for the kernel or held for a connection
  std::vector<int> buffered_;       // pids whose inbox may hold whole frames not handed out
  std::vector<int> visiting_;       // receive()'s copy of buffered_ while it works through it
  std::vector<int> flushing_;       // flush()'s copy of backlog_
  std::vector<Incoming> incoming_;  // accepted, not adopted
  std::size_t sockets_ = 0;         // data connections and dials holding a socket
  std::size_t closing_ = 0;         // data connections closing
  std::size_t data_connections_ = 0;
  std::uint64_t tick_ = 0;
  TcpSetupStats stats_;
};

const TransportRegistration kRegistration{"tcp", make_tcp_transport};

}  // namespace

std::size_t default_tcp_connections() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 65536;
  std::size_t available =
      limit.rlim_cur > kOtherDescriptors ? static_cast<std::size_t>(limit.rlim_cur) - kOtherDescriptors : 0;
  return std::max<std::size_t>(1, available / 3);
}

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
