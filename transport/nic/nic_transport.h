// transport/nic/nic_transport.h: the `nic` transport, paper 001's BSPlib/NIC on Linux:
// raw Ethernet frames (EtherType 0x88B5) through an AF_PACKET socket whose receive ring
// the kernel fills while the program computes and whose transmit ring is filled in place
// and kicked with one system call per batch; the layer above may refresh each queued
// frame at kick time (Transport::set_transmit_hook: the paper's "gathered send").
// Unreliable: the recovery layer runs on top, exactly as over udp.
#pragma once

#include <memory>

#include "transport/transport.h"

namespace bsp::transport {

// Options: "iface" (default: the interface owning "host", else lo), "mtu" (bytes of our
// frame per Ethernet frame, default min(1500, interface MTU), 8192 on lo where bigger
// frames measured faster), "rx_ring"/"tx_ring" (bytes), "sndbuf" (bytes the kernel may
// hold of frames sent but not yet out of the interface, default 4 MiB),
// "connect_timeout_ms" (how long connect() waits to hear every peer, default 5000).
// The published address is INTERFACE/MAC/HOST; connect() refuses, naming the pids,
// processes whose interfaces are not on one Ethernet segment (nic/segment_check.h).
std::unique_ptr<Transport> make_nic_transport(const TransportConfig& config);

}  // namespace bsp::transport
