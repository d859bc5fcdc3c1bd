// transport/nic/nic_transport.h: the `nic` transport, paper 001's BSPlib/NIC on Linux:
// raw Ethernet frames (EtherType 0x88B5; on lo one per destination, nic/ether_types.h) through an AF_PACKET socket
// whose receive ring the kernel fills while the program computes; frames leave in batches of one system call each,
// either gathered by sendmmsg straight from the layer above's buffers (default) or through a transmit ring filled in
// place, where the layer above may refresh each queued frame at kick time (Transport::set_transmit_hook: the paper's
// "gathered send").
// Unreliable: the recovery layer runs on top, exactly as over udp.
#pragma once

#include <memory>
#include <string>

#include "transport/transport.h"

namespace bsp::transport {

// Options: "iface" (default: the interface owning "host", else lo), "mtu" (bytes of our
// frame per Ethernet frame; default the interface's MTU up to 65535, the wire header's
// limit: 64 KiB on lo, 9000 on a jumbo interface, 1500 on ordinary Ethernet),
// "rx_ring"/"tx_ring" (frames; default 32 MiB / 4 MiB worth), "nic_rx" (v2: a status
// word per frame, default; v3: TPACKET_V3 blocks), "nic_tx" (send: sendmmsg from the
// caller's buffers, default; ring: the TPACKET_V2 transmit ring with the transmit hook),
// "sndbuf" (bytes the kernel may hold of frames sent but not yet out of the interface,
// default 4 MiB), "connect_timeout_ms" (how long connect() waits to hear every peer,
// default 5000). Measured choices: docs/tuning.md.
// The published address is INTERFACE/MAC/HOST; connect() refuses, naming the pids,
// processes whose interfaces are not on one Ethernet segment (nic/segment_check.h).
std::unique_ptr<Transport> make_nic_transport(const TransportConfig& config);

// For bsprun --stats: " nic:IFACE,RX,mtu:N nic_length_dropped=N nic_placed=N" when
// transport is (or wraps) nic, else "": how it receives (v2, v3, recv), frames dropped
// for their length (longer than the MTU, or cut short), payloads placed (rx=recv).
std::string nic_stats(const Transport& transport);

}  // namespace bsp::transport
