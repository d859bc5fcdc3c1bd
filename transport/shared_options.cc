// transport/shared_options.cc: the specs of the settings several transports read.
#include "transport/shared_options.h"

namespace bsp::transport::shared_options {

const TransportOption& rcvbuf() {
  static const TransportOption option = number_option(
      "rcvbuf", "udp 16 MiB", "kernel socket receive buffer in bytes (4096 to 1073741824)", 4096, 1L << 30);
  return option;
}

const TransportOption& sndbuf() {
  static const TransportOption option = number_option(
      "sndbuf", "nic 4 MiB", "kernel socket send buffer in bytes (4096 to 1073741824)", 4096, 1L << 30);
  return option;
}

const TransportOption& mtu() {
  static const TransportOption option = number_option(
      "mtu", "by link", "largest frame in bytes for udp, nic and xdp (64 to 65535)", 64, 65535);
  return option;
}

const TransportOption& iface() {
  static const TransportOption option = text_option("iface", "by host",
                                                    "network interface for the nic and xdp transports");
  return option;
}

const TransportOption& host() {
  static const TransportOption option = text_option("host", "127.0.0.1",
                                                    "address tcp and udp listen on (and nic finds its interface by)");
  return option;
}

const TransportOption& connect_timeout_ms() {
  static const TransportOption option = number_option(
      "connect-timeout-ms", "60000",
      "milliseconds a tcp connection (made on first use) may take to be made and proven before its peer is reported "
      "lost, or nic's segment check (default there 5000 + 50 per process) may go without progress before it names "
      "the pids still missing (1000 to 3600000)",
      1000, 3600000);
  return option;
}

}  // namespace bsp::transport::shared_options
