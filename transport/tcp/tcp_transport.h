// transport/tcp/tcp_transport.h: the `tcp` transport, paper 001's BSPlib/TCP: TCP_NODELAY
// stream connections, recovery done by TCP in the kernel. Connections are made lazily: a
// process connects to a peer on the first frame it sends there (or accepts the peer's
// connection), keeps at most a limited number open (least recently used ones are closed
// by an orderly exchange that loses nothing) and dials again when needed. Frames are
// length-prefixed on each stream and kept in order per peer across connections; a frame
// the kernel cannot take whole is queued per peer (bounded) and pushed by flush() and
// receive(). Readiness comes from one epoll descriptor.
//
// Only processes of the job are admitted: every connection is authenticated by a
// challenge-response keyed by the job's secret (TransportConfig::secret) in both
// directions before it carries a frame (transport/tcp/tcp_handshake.h).
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "transport/transport.h"

namespace bsp::transport {

// Options (declared with the registration, tcp_transport.cc): "host" (address to listen
// on, default 127.0.0.1), "sndbuf"/"rcvbuf" (bytes), "connect_timeout_ms" (how long a
// connection to a peer may take to be made and proven before the peer is reported lost,
// default 60000), "tcp_connections" (data connections open at once; default
// default_tcp_connections()). An empty value is the default.
std::unique_ptr<Transport> make_tcp_transport(const TransportConfig& config);

// The default limit on open data connections: a third of what RLIMIT_NOFILE leaves after
// 256 descriptors for everything else (the program's files, the control plane, shm, udp),
// since accepted connections may exceed the limit up to twice it until idle ones are
// closed, and as many again may be in their handshake (at least 64, at most p or the
// limit); at least 1.
std::size_t default_tcp_connections();

// What set-up refused, and how many connections were made, for the layer above to print.
struct TcpSetupStats {
  // Connections accepted on the listening port and closed without being adopted: a
  // stranger, a wrong secret, a silent socket (2 s), a pid out of range or already
  // connected, the losing side of two processes dialing each other at once.
  std::size_t refused_connections = 0;
  // Connections this process dialed whose other end did not prove to be the pid it was
  // dialing (wrong job, wrong pid, wrong secret in its answer).
  std::size_t unproven_peers = 0;
  std::string last_refusal;  // why the latest of either was refused
  // Proven connections closed without a refusal (nobody misbehaved): this process and
  // the peer dialed each other at once and the other connection survives, or the peer
  // dialed again before the old connection was closed here (it retries).
  std::size_t crossed_connections = 0;
  std::string last_crossed;  // why the latest of them was closed
  // Accepted connections closed by their dialer before a byte of hello: a peer that gave
  // up the dial (it adopted this process's connection instead), or a stranger that left.
  std::size_t abandoned_connections = 0;
  // Data connections adopted (dialed or accepted), closed in order (the limit, or the
  // peer's), open now, and the most open at once.
  std::size_t connections_opened = 0;
  std::size_t connections_closed = 0;
  std::size_t connections_open = 0;
  std::size_t peak_connections = 0;
};

// The set-up statistics of the tcp transport in transport's chain of decorators; zeros
// when there is none.
TcpSetupStats tcp_setup_stats(const Transport& transport);

}  // namespace bsp::transport
