// transport/xdp/xdp_transport.h: the `xdp` transport: nic's raw Ethernet frames (same
// wire format, EtherTypes, Ethernet header per pid, segment check, MAC and job checks
// in the reliable layer above) moved through an AF_XDP socket instead of AF_PACKET
// rings. An XDP program of ours (xdp_steer.bpf.c, attached through libxdp's dispatcher
// so several jobs share the interface) steers exactly this process's frames into the
// socket's UMEM and passes all other traffic to the next program or the kernel.
// Frames sent through AF_XDP leave by the driver directly, bypassing the interface's
// qdisc (a tbf shaper does not hold them back).
#pragma once

#include <memory>
#include <string>

#include "transport/transport.h"

namespace bsp::transport {

// Options: "iface" (as nic: default the interface owning "host", else lo), "mtu" (at most
// the interface's MTU and what one 4 KiB UMEM buffer holds: 3826 bytes), "xdp_queue"
// (the interface queue to bind, default 0), "umem_frames" (UMEM buffers, a power of two,
// half receiving, half sending; default 8192 receiving (32 MiB, as nic's ring; less beyond
// p = 16, at least 2 MiB) and 4096 sending), "xdp_mode" (auto: native, else generic skb,
// and skb on veth, where copy-mode AF_XDP ran faster so, without busy polling unless
// busy_poll_us is given; native; skb),
// "xdp_copy" (auto: zero-copy where the driver can; zerocopy; copy), "busy_poll_us"
// (SO_BUSY_POLL with SO_PREFER_BUSY_POLL; default 20, 0 for none), "connect_timeout_ms"
// (the segment check's deadline, default 5000).
// One process per interface queue: a second process of any job on the same interface
// and queue is refused (EBUSY) with advice to use shm+xdp, which reaches the processes of
// one host through shared memory.
std::unique_ptr<Transport> make_xdp_transport(const TransportConfig& config);

// " xdp:eth0,skb(auto:veth),copy,no_busy_poll" (interface, XDP mode and why auto chose it,
// UMEM mode, busy polling) for --stats when the
// transport (or the one a decorator or hybrid wraps) is xdp; "" otherwise.
std::string xdp_stats(const Transport& transport);

}  // namespace bsp::transport
