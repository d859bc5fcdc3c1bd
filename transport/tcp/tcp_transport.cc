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
//
// The work is split by layer: this file is the Transport itself (set-up, send, receive,
// flush, losses); connections.cc makes, proves, adopts, limits and closes connections;
// frame_stream.cc frames each peer's stream (gathered writes, reading in place, placement).
#include "transport/tcp/tcp_transport.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

#include "transport/option_spec.h"
#include "transport/registry.h"
#include "transport/shared_options.h"
#include "transport/tcp/tcp_transport_class.h"

namespace bsp::transport {
namespace tcp {
namespace {

std::runtime_error system_error(const std::string& what) {
  return std::runtime_error(fmt::format("tcp transport: {}: {}", what, std::strerror(errno)));
}

// What tcp reads from TransportConfig::options (shown by bsprun --help, checked there).
const std::vector<TransportOption>& tcp_options() {
  static const std::vector<TransportOption> options = {
      shared_options::host(),
      shared_options::sndbuf(),
      shared_options::rcvbuf(),
      shared_options::connect_timeout_ms(),
      number_option("tcp-connections", "by RLIMIT_NOFILE",
                    "data connections tcp keeps open at once (1 to 1048576): connections are made on first use, and "
                    "the least recently used is closed in order when a new one would exceed this (accepted ones up to "
                    "twice it); default: a third of what RLIMIT_NOFILE leaves after 256 descriptors",
                    1, 1L << 20),
  };
  return options;
}

}  // namespace

TcpTransport::TcpTransport(const TransportConfig& config)
    : config_(config), peers_(static_cast<std::size_t>(std::max(config.nprocs, 1))) {
  TransportOptions options("tcp", config.options, tcp_options());
  host_ = options.text("host", "127.0.0.1");
  sndbuf_ = static_cast<int>(options.number("sndbuf", 0));
  rcvbuf_ = static_cast<int>(options.number("rcvbuf", 0));
  connect_timeout_ms_ = static_cast<int>(options.number("connect-timeout-ms", kDefaultConnectTimeoutMs));
  if (connect_timeout_ms_ <= 0) {
    throw std::runtime_error(fmt::format("tcp transport: connect_timeout_ms={} must be positive", connect_timeout_ms_));
  }
  long limit = options.number("tcp-connections", static_cast<long>(default_tcp_connections()));
  if (limit < 1) throw std::runtime_error(fmt::format("tcp transport: tcp_connections={} must be at least 1", limit));
  limit_ = static_cast<std::size_t>(limit);
}

TcpTransport::~TcpTransport() {
  for (Peer& peer : peers_) {
    if (peer.fd >= 0) ::close(peer.fd);
  }
  for (int fd : {listen_fd_, epoll_fd_, loss_fd_, timer_fd_}) {
    if (fd >= 0) ::close(fd);
  }
}

// Every connection proved the job's secret and its pid when it was set up (the
// handshake), so frames need no MAC of their own.
Capabilities TcpTransport::capabilities() const {
  Capabilities capabilities{kTcpMtu, true};
  capabilities.authenticated_links = true;
  // TCP's own checksum (and the link's CRC under it) guards the bytes of a connection
  // nobody else can write into: a CRC32C of ours over every frame would cost as much as
  // a copy of the data (9 GB/s against a 4.7 GB/s stream on loopback) and find nothing.
  capabilities.intact = true;
  return capabilities;
}

std::string TcpTransport::local_address() {
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
void TcpTransport::connect(const std::vector<std::string>& addresses) {
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

// [u32 length][head][body] in one sendmsg, the body from where the caller keeps it.
SendStatus TcpTransport::send_gathered(int peer_pid, std::span<const std::byte> head, std::span<const std::byte> body) {
  Peer& peer = peers_[static_cast<std::size_t>(peer_pid)];
  if (peer.lost) return SendStatus::sent;  // reported by receive(); drop quietly
  peer.last_used = ++tick_;
  if (peer.link != Link::open) return hold(peer_pid, head, body);
  if (peer.stream.has_queued() && !flush_peer(peer_pid)) return SendStatus::busy;
  if (peer.lost) return SendStatus::sent;
  int error = 0;
  switch (peer.stream.write(peer.fd, head, body, error)) {
    case FrameStream::Sent::whole:
      break;
    case FrameStream::Sent::queued:
      note_backlog(peer_pid);
      set_events(peer_pid);
      break;
    case FrameStream::Sent::failed:
      mark_lost(peer_pid, fmt::format("send: {}", std::strerror(error)), true);
      break;
  }
  return SendStatus::sent;
}

std::size_t TcpTransport::receive(FrameSink& sink, std::size_t max_frames) {
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
bool TcpTransport::flush() {
  bool drained = true;
  take(backlog_, flushing_, &Peer::in_backlog);
  for (int pid : flushing_) {
    Peer& peer = peers_[static_cast<std::size_t>(pid)];
    if (peer.lost) continue;
    if (peer.stream.has_queued()) drained &= flush_peer(pid);
    if (peer.stream.has_pending() && !peer.lost) drained = false;  // its connection is being made
    if (!peer.lost && (peer.stream.has_queued() || peer.stream.has_pending())) note_backlog(pid);
  }
  flushing_.clear();
  return drained;
}

// ---------------------------------------------------------------- data path

bool TcpTransport::all_open() const {
  for (int pid = 0; pid < static_cast<int>(peers_.size()); ++pid) {
    if (pid != config_.pid && peers_[static_cast<std::size_t>(pid)].link != Link::open) return false;
  }
  return true;
}

std::size_t TcpTransport::poll_events(FrameSink& sink, std::size_t max_frames, std::size_t used) {
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
        if (pid >= static_cast<int>(peers_.size()) || peers_[static_cast<std::size_t>(pid)].generation != generation)
          break;
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
void TcpTransport::set_events(int pid) {
  Peer& peer = peers_[static_cast<std::size_t>(pid)];
  if (peer.fd < 0 || peer.lost) return;
  std::uint32_t wanted = (peer.got_marker || peer.eof ? 0u : std::uint32_t{EPOLLIN}) |
                         (peer.stream.has_queued() ? std::uint32_t{EPOLLOUT} : 0u);
  if (wanted == peer.events) return;
  peer.events = wanted;
  modify(peer.fd, wanted, tag(kData, peer_value(pid, peer.generation)));
}

// Pushes the peer's queued bytes; true when none are left.
bool TcpTransport::flush_peer(int pid) {
  Peer& peer = peers_[static_cast<std::size_t>(pid)];
  if (peer.fd < 0) return !peer.stream.has_queued();
  if (!peer.lost) {
    int error = 0;
    switch (peer.stream.flush(peer.fd, error)) {
      case FrameStream::Flushed::drained:
        break;
      case FrameStream::Flushed::blocked:
        set_events(pid);
        return false;
      case FrameStream::Flushed::failed:
        mark_lost(pid, fmt::format("send: {}", std::strerror(error)), true);
        break;
    }
  }
  peer.stream.drop_queued();
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
std::size_t TcpTransport::read_and_deliver(int pid, FrameSink& sink, std::size_t max_frames, std::size_t used) {
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
void TcpTransport::settle_end_of_file(int pid) {
  Peer& peer = peers_[static_cast<std::size_t>(pid)];
  if (!peer.eof || peer.lost || peer.fd < 0) return;
  if (!peer.got_marker) return mark_lost(pid, "connection closed", false);
  if (peer.stream.has_queued()) flush_peer(pid);
  if (peer.fd >= 0 && !peer.lost && peer.stream.has_queued()) {
    mark_lost(pid, "it closed the connection before reading what was sent to it", false);
  }
}

// Reads what the kernel has for pid; marks the peer lost when the connection breaks.
// While a frame is placed, its tail is read straight into the sink's room and only the
// next frame's head into the inbox (so that frame may be placed too). True when a placed
// frame is complete and more may be waiting (deliver it, then read again).
bool TcpTransport::read_from(int pid) {
  Peer& peer = peers_[static_cast<std::size_t>(pid)];
  if (peer.lost || peer.fd < 0 || peer.got_marker || peer.eof) return false;
  int error = 0;
  switch (peer.stream.read(peer.fd, place_head_, error)) {
    case FrameStream::Read::more:
      return true;
    case FrameStream::Read::drained:
      return false;
    case FrameStream::Read::end_of_file:
      peer.eof = true;  // judged once the frames before it are handed out
      set_events(pid);
      return false;
    case FrameStream::Read::failed:
      mark_lost(pid, fmt::format("recv: {}", std::strerror(error)), false);
      return false;
  }
  return false;
}

std::size_t TcpTransport::deliver(int pid, FrameSink& sink, std::size_t max_frames) {
  Peer& peer = peers_[static_cast<std::size_t>(pid)];
  bool out_of_budget = false;
  std::size_t delivered = peer.stream.deliver(pid, sink, max_frames, place_head_, *this, out_of_budget);
  if (delivered) peer.last_used = ++tick_;
  if (out_of_budget) note_buffered(pid);  // the next receive
  return delivered;
}

// A peer's bye or bye-ack, met in its stream: true when the peer is lost after it.
bool TcpTransport::on_marker(int pid, bool bye) {
  on_marker_received(pid, bye);
  return peers_[static_cast<std::size_t>(pid)].lost;
}

void TcpTransport::on_bad_stream(int pid, std::string why) { mark_lost(pid, std::move(why), false); }

// The peers flush() and receive() visit (backlog_, buffered_), listed when their work
// appears; in_list is the Peer's flag for the list.
void TcpTransport::note(int pid, std::vector<int>& list, bool Peer::*in_list) {
  bool& listed = peers_[static_cast<std::size_t>(pid)].*in_list;
  if (listed) return;
  listed = true;
  list.push_back(pid);
}

// Moves a list into `into` for a pass over it: its peers are no longer listed, so the
// pass (or anything it calls) can list them again.
void TcpTransport::take(std::vector<int>& list, std::vector<int>& into, bool Peer::*in_list) {
  into.swap(list);
  for (int pid : into) peers_[static_cast<std::size_t>(pid)].*in_list = false;
}

// ---------------------------------------------------------------- losses

// Reports each lost peer once, after handing out the frames that arrived before the loss.
std::size_t TcpTransport::report_losses(FrameSink& sink) {
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
void TcpTransport::mark_lost(int pid, std::string why, bool drain) {
  Peer& peer = peers_[static_cast<std::size_t>(pid)];
  if (peer.lost) return;
  if (drain && peer.fd >= 0 && !peer.got_marker &&
      !peer.stream.placing_frame()) {  // (after a cut frame nothing counts)
    peer.stream.drain(peer.fd);
  }
  peer.lost = true;
  peer.why = std::move(why);
  peer.stream.cut();  // a frame cut short is never delivered (the sink learns of the loss)
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

bool TcpTransport::watch(int fd, std::uint32_t events, std::uint64_t value) {
  epoll_event event{};
  event.events = events;
  event.data.u64 = value;
  return ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event) == 0;
}

void TcpTransport::modify(int fd, std::uint32_t events, std::uint64_t value) {
  epoll_event event{};
  event.events = events;
  event.data.u64 = value;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd, &event);
}

bool TcpTransport::parse_address(const std::string& address, sockaddr_in& target) {
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

void TcpTransport::tune(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (sndbuf_ > 0) ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf_, sizeof sndbuf_);
  if (rcvbuf_ > 0) ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf_, sizeof rcvbuf_);
}

namespace {
const TransportRegistration kRegistration{"tcp", make_tcp_transport, tcp_options()};
}  // namespace

}  // namespace tcp

using tcp::TcpTransport;

std::size_t default_tcp_connections() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 65536;
  std::size_t available = limit.rlim_cur > tcp::kOtherDescriptors
                              ? static_cast<std::size_t>(limit.rlim_cur) - tcp::kOtherDescriptors
                              : 0;
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
