// transport/tcp/peer_link.h: what the tcp transport knows of each peer: the state of its
// link (no connection, dialing, open, closing), a dial in progress, the data connection's
// socket and stream, and connections accepted but not adopted yet. Also the epoll tags the
// transport's one epoll set uses and the set-up's timing constants.
#pragma once

#include <netinet/in.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include "transport/file_descriptor.h"
#include "transport/tcp/frame_stream.h"
#include "transport/tcp/tcp_handshake.h"

namespace bsp::transport::tcp {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using Fd = FileDescriptor;

constexpr std::size_t kDirectPollPeers = 2;       // up to this many peers: recv each, no epoll
constexpr int kDefaultConnectTimeoutMs = 60000;   // a connection to be made and proven
constexpr milliseconds kHandshakeDeadline{2000};  // an accepted connection, to prove itself
constexpr std::size_t kMaxUnproven = 64;          // accepted, not adopted (or p, if more); oldest dropped
constexpr milliseconds kFirstRetry{1};            // dial again after a failure, doubling
constexpr milliseconds kMaxRetry{200};
constexpr milliseconds kAcceptPause{10};        // out of descriptors: accept again after
constexpr std::size_t kOtherDescriptors = 256;  // kept for the rest of the process

// epoll tags: kind << 32 | value. Sockets of a peer carry its pid and a generation, so
// an event of a socket closed earlier in the same batch is not taken for its successor.
enum Kind : std::uint32_t { kLossEvent = 1, kListener, kTimer, kData, kDial, kIncoming };
inline std::uint64_t tag(Kind kind, std::uint32_t value) { return (std::uint64_t{kind} << 32) | value; }
inline std::uint32_t peer_value(int pid, std::uint16_t generation) {
  return static_cast<std::uint32_t>(pid) | (std::uint32_t{generation} << 16);
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
  std::uint64_t epoch = 0;   // counts connections adopted and ended: what a waiting connection was judged in
  std::uint32_t events = 0;  // what epoll watches on fd
  Dial dial;
  bool sent_marker = false, got_marker = false, eof = false;
  bool lost = false, loss_reported = false;
  std::string why;              // the loss, once lost
  FrameStream stream;           // the frames both ways, and those held for the next connection
  bool in_backlog = false;      // in TcpTransport::backlog_
  bool in_buffered = false;     // in TcpTransport::buffered_
  std::uint64_t last_used = 0;  // for closing the least recently used
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
  int proven_pid = -1;      // hello verified; waiting (welcome withheld) for a slot
  std::uint64_t epoch = 0;  // the peer's link epoch when the hello verified
};

}  // namespace bsp::transport::tcp
