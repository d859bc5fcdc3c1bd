// transport/tcp/tcp_transport.h: the `tcp` transport, paper 001's BSPlib/TCP: a full mesh
// of TCP_NODELAY stream connections, recovery done by TCP in the kernel. Frames are
// length-prefixed on each stream; a frame the kernel cannot take whole is queued per peer
// (bounded) and pushed by flush(). Readiness comes from one epoll descriptor.
//
// Set-up admits only processes of the job: every connection is authenticated by a
// challenge-response keyed by the job's secret (TransportConfig::secret) in both
// directions before it carries a frame (message layout in tcp_transport.cc).
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "transport/transport.h"

namespace bsp::transport {

// Options: "host" (address to listen on, default 127.0.0.1), "sndbuf"/"rcvbuf" (bytes),
// "connect_timeout_ms" (bound on the whole of connect(), default 60000).
std::unique_ptr<Transport> make_tcp_transport(const TransportConfig& config);

// What set-up refused, for the layer above to print (connect() also prints one line to
// standard error when anything was refused).
struct TcpSetupStats {
  // Connections accepted on the listening port and closed without being adopted: a
  // stranger, a wrong secret, a silent socket (2 s), a pid not expected or already
  // connected, one still unproven when set-up finished.
  std::size_t refused_connections = 0;
  // Connections this process dialed whose other end did not prove to be the pid it was
  // dialing (wrong job, wrong pid, wrong secret in its answer).
  std::size_t unproven_peers = 0;
  std::string last_refusal;  // why the latest of either was refused
};

// The set-up statistics of the tcp transport in transport's chain of decorators; zeros
// when there is none.
TcpSetupStats tcp_setup_stats(const Transport& transport);

}  // namespace bsp::transport
