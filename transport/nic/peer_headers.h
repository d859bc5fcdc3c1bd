// transport/nic/peer_headers.h: the set-up shared by the transports that send raw
// Ethernet frames (nic, xdp): read the peers' published addresses as hostile input,
// refuse what cannot work judging by them alone, prove the rest reachable on the wire
// (segment_check.h), and return the Ethernet header of a data frame to each pid.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "transport/nic/packet_socket.h"
#include "transport/transport.h"

namespace bsp::transport::nic {

// `transport` names the caller in messages ("nic transport"). Throws std::runtime_error.
std::vector<EthernetHeader> connect_peers(const char* transport, const TransportConfig& config,
                                          const Interface& interface, const std::vector<std::string>& addresses,
                                          std::chrono::milliseconds segment_check_deadline);

}  // namespace bsp::transport::nic
