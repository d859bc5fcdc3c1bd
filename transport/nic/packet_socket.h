// transport/nic/packet_socket.h: the raw side of the nic transport: an AF_PACKET socket
// for one EtherType on one interface, the interface's facts (index, MAC, MTU), and a BPF
// filter compiled with libpcap so the kernel hands this socket only its own job's frames
// addressed to its pid (on `lo` every packet socket would otherwise see every frame).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "transport/nic/ether_types.h"
#include "transport/transport.h"

namespace bsp::transport::nic {

inline constexpr std::size_t kEthernetHeader = 14;

using MacAddress = std::array<std::uint8_t, 6>;
using EthernetHeader = std::array<std::byte, kEthernetHeader>;

struct Interface {
  std::string name;
  int index = 0;
  MacAddress mac{};
  int mtu = 0;
};

// Looks up an interface by name; throws std::runtime_error if there is none.
Interface find_interface(const std::string& name);
// Whether frames sent on the interface come back in to this host's packet sockets bound
// to their type (lo, or any interface without a MAC): there each process's data frames
// get an EtherType of their own (nic/ether_types.h).
bool is_loopback(const Interface& interface);
// The Ethernet header of a data frame to each pid (peers[pid] is its MAC): its MAC, the
// source interface's, and its data EtherType; written once, copied in front of each frame.
std::vector<EthernetHeader> ethernet_headers(const Interface& source, const std::vector<MacAddress>& peers);
// The interface that owns an IPv4 address (for choosing the interface that reaches the
// peers); "lo" for loopback addresses.
std::string interface_for_address(const std::string& ipv4);

// Opens the packet socket, receiving nothing until bound. Throws with a message that says
// how to get CAP_NET_RAW when it is missing.
int open_packet_socket();
// Attaches a BPF filter that passes only frames of ether_type (the data frames' one for
// this process: data_ether_type(is_loopback(interface), pid)) with the given fields
// (offsets in the frame after the Ethernet header), then binds fd to interface.
void filter_and_bind(int fd, const Interface& interface, const std::vector<FrameMatch>& fields,
                     std::uint16_t ether_type);
// The same with a libpcap expression for the rest ("" for none), built from
// field_equals() joined by "and", "or" and parentheses.
void filter_expression_and_bind(int fd, const Interface& interface, const std::string& expression,
                                std::uint16_t ether_type);
// "ether[OFFSET:SIZE] == VALUE" for a little-endian field of the frame after the Ethernet
// header; throws std::runtime_error for a size other than 1, 2 or 4.
std::string field_equals(const FrameMatch& field);

std::string format_mac(const MacAddress& mac);
// Parses "aa:bb:cc:dd:ee:ff" exactly; throws std::runtime_error otherwise.
MacAddress parse_mac(const std::string& text);

}  // namespace bsp::transport::nic
