// transport/tcp/connections.cc: the tcp transport's connections (see tcp_transport.cc's
// opening comment for the protocol): frames held for a peer with no connection, dials made,
// retried and proven, accepted connections challenged, adopted or refused, the limit on
// open connections kept by closing the least recently used in order, and the timers of
// all that. The data path and losses are in tcp_transport.cc, the framing in frame_stream.cc.
#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <utility>
#include <vector>

#include "auth/mac.h"
#include "transport/tcp/tcp_transport_class.h"

namespace bsp::transport::tcp {

// ---------------------------------------------------------------- holding and dialing

// A frame for a peer without an open connection: held for the next one.
SendStatus TcpTransport::hold(int pid, std::span<const std::byte> head, std::span<const std::byte> body) {
  Peer& peer = peers_[static_cast<std::size_t>(pid)];
  if (peer.stream.pending_full()) return SendStatus::busy;
  peer.stream.hold(head, body);
  note_backlog(pid);
  if (peer.link == Link::none) request_connection(pid, Clock::now());
  return SendStatus::sent;
}

void TcpTransport::request_connection(int pid, Clock::time_point now) {
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
void TcpTransport::try_dial(int pid, Clock::time_point now) {
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

void TcpTransport::close_dial_socket(Dial& dial) {
  if (dial.fd) {
    dial.fd.reset();  // closing removes it from the epoll set
    count_socket(-1);
  }
}

// This attempt failed: try again after a back-off, or report the peer lost once the
// connect timeout has passed (at once when nobody listens at its address: it is gone).
void TcpTransport::dial_failed(int pid, std::string problem, bool nobody_listens, Clock::time_point now) {
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

void TcpTransport::lose_dial(int pid) {
  Peer& peer = peers_[static_cast<std::size_t>(pid)];
  mark_lost(pid,
            fmt::format("no connection to {} within {:g} s ({})", peer.address_text, connect_timeout_ms_ / 1000.0,
                        peer.dial.problem.empty() ? "no answer" : peer.dial.problem),
            false);
}

void TcpTransport::unproven_peer(int pid, std::string problem) {
  Peer& peer = peers_[static_cast<std::size_t>(pid)];
  ++stats_.unproven_peers;
  stats_.last_refusal = fmt::format("the process at {} (dialed as pid {}) {}", peer.address_text, pid, problem);
  note_refusal();
  dial_failed(pid, std::move(problem), false);
}

void TcpTransport::progress_dial(int pid) {
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

void TcpTransport::accept_all(Clock::time_point now) {
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
void TcpTransport::progress_incoming(Incoming& connection, Clock::time_point now) {
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
void TcpTransport::decide(Incoming& connection, Clock::time_point now) {
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
void TcpTransport::drop(Incoming& connection, std::string_view why) {
  ++stats_.crossed_connections;
  stats_.last_crossed = why;
  connection.fd.reset();
}

void TcpTransport::welcome(Incoming& connection, Clock::time_point now) {
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

void TcpTransport::refuse(Incoming& connection, std::string why, bool say) {
  ++stats_.refused_connections;
  stats_.last_refusal = std::move(why);
  if (say) note_refusal();
  connection.fd.reset();
}

// Says the first refusal on standard error (the rest are counted in the statistics).
void TcpTransport::note_refusal() {
  if (refusal_said_) return;
  refusal_said_ = true;
  std::fprintf(stderr, "tcp transport: pid %d refused a connection: %s\n", config_.pid, stats_.last_refusal.c_str());
}

// ---------------------------------------------------------------- connections

// pid's connection is proven: its held frames go first.
void TcpTransport::adopt(int pid, int fd) {
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
  peer.stream.queue_pending();
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.u64 = tag(kData, peer_value(pid, peer.generation));
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd, &event) < 0 && ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event) < 0) {
    return mark_lost(pid, fmt::format("epoll_ctl: {}", std::strerror(errno)), false);
  }
  peer.events = EPOLLIN;
  if (peer.stream.has_queued()) flush_peer(pid);
  make_room();  // dials or connections may be waiting for a slot this one took
}

// Closes connections, least recently used first (idle ones before busy ones), until
// what stays open or is wanted fits the limit once the closes under way finish.
void TcpTransport::make_room() {
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
      bool idle = peer.stream.idle();
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

void TcpTransport::begin_close(int pid) {
  Peer& peer = peers_[static_cast<std::size_t>(pid)];
  peer.link = Link::closing;
  ++closing_;
  peer.stream.queue_marker(kByeMark);
  note_backlog(pid);
  peer.sent_marker = true;
  flush_peer(pid);
}

// The peer's bye or bye-ack: it sends nothing more on this connection.
void TcpTransport::on_marker_received(int pid, bool bye) {
  Peer& peer = peers_[static_cast<std::size_t>(pid)];
  if (peer.lost) return;
  if (peer.link != Link::open && peer.link != Link::closing) return;
  if (!bye && !peer.sent_marker) {
    return mark_lost(pid, "it answered a bye that was never sent", false);
  }
  peer.got_marker = true;
  if (peer.stream.has_unread()) return mark_lost(pid, "it sent bytes after closing the connection", false);
  if (peer.link == Link::open) {
    peer.link = Link::closing;
    ++closing_;
  }
  if (!peer.sent_marker) {
    peer.stream.queue_marker(kByeAckMark);  // after this side's own queued frames
    note_backlog(pid);
    peer.sent_marker = true;
  }
  if (peer.stream.has_queued()) {
    flush_peer(pid);  // finishes the close once written
  } else {
    maybe_finish_close(pid);
  }
}

void TcpTransport::maybe_finish_close(int pid) {
  Peer& peer = peers_[static_cast<std::size_t>(pid)];
  if (peer.lost || peer.link != Link::closing || !peer.sent_marker || !peer.got_marker || peer.stream.has_queued()) {
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
  peer.stream.release_connection();
  --closing_;
  stats_.connections_open = --data_connections_;
  ++stats_.connections_closed;
  count_socket(-1);
  Clock::time_point now = Clock::now();
  if (peer.stream.has_pending()) request_connection(pid, now);
  serve_waiters(now);
}

// A slot may be free, or an old connection closed: dials waiting for a slot and
// proven connections waiting for either get their turn.
void TcpTransport::serve_waiters(Clock::time_point now) {
  for (std::size_t i = 0; i < dialing_.size() && sockets_ < limit_; ++i) {
    int pid = dialing_[i];
    if (peers_[static_cast<std::size_t>(pid)].dial.step == Dial::Step::slot) try_dial(pid, now);
  }
  for (Incoming& connection : incoming_) {
    if (connection.fd && connection.proven_pid >= 0) decide(connection, now);
  }
}

// ---------------------------------------------------------------- timers

// Retries, deadlines, waiting connections; then arms the timer for the next of them.
void TcpTransport::service(Clock::time_point now) {
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

void TcpTransport::arm_timer() {
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

}  // namespace bsp::transport::tcp
