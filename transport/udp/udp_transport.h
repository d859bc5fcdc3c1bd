// transport/udp/udp_transport.h: the `udp` transport, paper 001's BSPlib/UDP: one
// datagram socket per process, frames sent and received in batches (sendmmsg/recvmmsg),
// no recovery (recovery/ does it in user space). Unreliable: a frame may be lost (kernel
// buffer overrun), duplicated or reordered by the network.
//
// Options: "host" (address to bind, default 127.0.0.1), "mtu" (largest frame, default
// 1472: an Ethernet payload minus IP and UDP headers; when bound to 127.x, where bigger
// frames measured faster, 65507 (the largest datagram) up to 16 processes, with a 24 MiB
// pool suggested to the reliable layer, else 8192), "rcvbuf"/"sndbuf" (kernel socket
// buffers in bytes, default 16 MiB / 4 MiB; forced past the sysctl limit when privileged),
// "pace" (minimum gap between datagrams sent, e.g. "20us", "1ms", "500ns"; a bare number
// is microseconds: paper 001's throttled sender UDP-2; send refuses (busy) until the gap
// has passed), "udp_offload" ("1", default: consecutive equal-size frames to one peer go
// in one sendmsg with UDP_SEGMENT, off loopback only until the interface's queue first
// refuses a send; on loopback the socket takes datagrams the kernel coalesced, UDP_GRO;
// "0": one datagram per frame; "gso" and "gro" set each side alone, "gso=1" never
// stopped), "recverr" ("1" off loopback: IP_RECVERR,
// so a datagram the interface's full queue drops is refused as busy, not lost in silence). With GRO a
// receive() delivers every frame of the datagrams it takes: possibly more than max_frames.
// A sink that asks for it (FrameSink::datagram_room: the reliable channel during a bulk
// transfer) gets a datagram's payloads read straight where it says, one recvmsg each.
// Option "fault" wraps it in transport/fault (see registry.h).
#pragma once

#include <memory>
#include <string>

#include "transport/transport.h"

namespace bsp::transport {

std::unique_ptr<Transport> make_udp_transport(const TransportConfig& config);

// For --stats, when transport is udp (or wraps it): " udp:mtu-N,gso-S,gro-S
// udp_segmented_sends=N udp_coalesced=N udp_bad_coalesced=N", S being on, off or
// unavailable(ERRNO) (the kernel refused the option: one datagram per frame); else "".
std::string udp_stats(const Transport& transport);

}  // namespace bsp::transport
