// transport/nic/packet_socket.cc: AF_PACKET socket, interface facts, BPF via libpcap.
#include "transport/nic/packet_socket.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <ifaddrs.h>
#include <linux/filter.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pcap/pcap.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "transport/file_descriptor.h"

namespace bsp::transport::nic {

Interface find_interface(const std::string& name) {
  Interface interface;
  interface.name = name;
  interface.index = static_cast<int>(::if_nametoindex(name.c_str()));
  if (interface.index == 0) {
    throw std::runtime_error(fmt::format("nic transport: no network interface '{}' (see `ip link`)", name));
  }
  FileDescriptor fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd)
    throw std::runtime_error(fmt::format("nic transport: socket for interface queries: {}", std::strerror(errno)));
  ifreq request{};
  std::strncpy(request.ifr_name, name.c_str(), IFNAMSIZ - 1);
  if (::ioctl(fd.get(), SIOCGIFHWADDR, &request) != 0) {
    throw std::runtime_error(fmt::format("nic transport: the MAC address of {}: {}", name, std::strerror(errno)));
  }
  std::memcpy(interface.mac.data(), request.ifr_hwaddr.sa_data, 6);
  if (::ioctl(fd.get(), SIOCGIFMTU, &request) == 0) interface.mtu = request.ifr_mtu;
  return interface;
}

std::string interface_for_address(const std::string& ipv4) {
  in_addr wanted{};
  if (::inet_pton(AF_INET, ipv4.c_str(), &wanted) != 1 || (ntohl(wanted.s_addr) >> 24) == 127) return "lo";
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return "lo";
  std::string found = "lo";
  for (ifaddrs* entry = list; entry; entry = entry->ifa_next) {
    if (entry->ifa_addr && entry->ifa_addr->sa_family == AF_INET &&
        reinterpret_cast<sockaddr_in*>(entry->ifa_addr)->sin_addr.s_addr == wanted.s_addr) {
      found = entry->ifa_name;
      break;
    }
  }
  ::freeifaddrs(list);
  return found;
}

int open_packet_socket() {
  // Protocol 0: nothing is received until filter_and_bind() names the EtherType, so no
  // foreign frame slips in before the filter is attached.
  int fd = ::socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
  if (fd >= 0) return fd;
  if (errno == EPERM || errno == EACCES) {
    throw std::runtime_error(
        "the nic transport sends raw Ethernet frames and needs CAP_NET_RAW: run as root, or "
        "grant it to the program with `sudo setcap cap_net_raw+ep PROGRAM` (and to bsprun); "
        "the tcp and udp transports need no privileges (--transport=tcp or --transport=udp)");
  }
  throw std::runtime_error(fmt::format("nic transport: AF_PACKET socket: {}", std::strerror(errno)));
}

std::string field_equals(const FrameMatch& field) {
  // BPF loads are big-endian; frame fields are little-endian, so compare byte-swapped.
  if (field.size != 1 && field.size != 2 && field.size != 4) {
    throw std::runtime_error(fmt::format("nic transport: a frame filter field of {} bytes", field.size));
  }
  std::uint32_t swapped = field.size == 4   ? __builtin_bswap32(field.value)
                          : field.size == 2 ? __builtin_bswap16(static_cast<std::uint16_t>(field.value))
                                            : field.value & 0xFF;
  return fmt::format("ether[{}:{}] == 0x{:x}", kEthernetHeader + field.offset, field.size, swapped);
}

void filter_and_bind(int fd, const Interface& interface, const std::vector<FrameMatch>& fields,
                     std::uint16_t ether_type) {
  std::string expression;
  for (const FrameMatch& field : fields) expression += (expression.empty() ? "" : " and ") + field_equals(field);
  filter_expression_and_bind(fd, interface, expression, ether_type);
}

void filter_expression_and_bind(int fd, const Interface& interface, const std::string& rest, std::uint16_t ether_type) {
  std::string expression = fmt::format("ether proto 0x{:04x}", ether_type);
  if (!rest.empty()) expression += " and (" + rest + ")";
  // The filter's accept returns the snap length: larger than any frame (lo's 64 KiB
  // frames plus the Ethernet header exceed 65535, and would arrive cut short).
  constexpr int kSnapLength = 262144;
  std::unique_ptr<pcap_t, decltype(&pcap_close)> dead(pcap_open_dead(DLT_EN10MB, kSnapLength), pcap_close);
  bpf_program program{};
  if (pcap_compile(dead.get(), &program, expression.c_str(), 1, PCAP_NETMASK_UNKNOWN) != 0) {
    throw std::runtime_error(fmt::format("nic transport: BPF filter '{}': {}", expression, pcap_geterr(dead.get())));
  }
  sock_fprog attached{static_cast<unsigned short>(program.bf_len), reinterpret_cast<sock_filter*>(program.bf_insns)};
  int status = ::setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &attached, sizeof attached);
  pcap_freecode(&program);
  if (status != 0)
    throw std::runtime_error(fmt::format("nic transport: attaching the BPF filter: {}", std::strerror(errno)));
  // On loopback every frame sent comes back in: bound to the EtherType, ignoring what is
  // sent. On an Ethernet interface a frame sent to a process of this same host (same
  // interface, same MAC) never comes back in (the switch does not return it to its port);
  // it is seen only on its way out, by sockets bound to every protocol. So there the
  // socket takes every frame, outgoing ones too, and the filter keeps this job's frames
  // to this pid (its own sends are to other pids, so they do not pass).
  const bool loopback = is_loopback(interface);
  if (loopback) {
    int one = 1;
    ::setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof one);  // not our own sends
  }
  sockaddr_ll address{};
  address.sll_family = AF_PACKET;
  address.sll_protocol = htons(loopback ? ether_type : ETH_P_ALL);
  address.sll_ifindex = interface.index;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    throw std::runtime_error(fmt::format("nic transport: bind to {}: {}", interface.name, std::strerror(errno)));
  }
}

bool is_loopback(const Interface& interface) { return interface.name == "lo" || interface.mac == MacAddress{}; }

std::vector<EthernetHeader> ethernet_headers(const Interface& source, const std::vector<MacAddress>& peers) {
  std::vector<EthernetHeader> headers;
  const bool loopback = is_loopback(source);
  for (std::size_t pid = 0; pid < peers.size(); ++pid) {
    EthernetHeader header{};
    std::memcpy(header.data(), peers[pid].data(), 6);
    std::memcpy(header.data() + 6, source.mac.data(), 6);
    const std::uint16_t type = data_ether_type(loopback, static_cast<int>(pid));
    header[12] = std::byte{static_cast<std::uint8_t>(type >> 8)};
    header[13] = std::byte{static_cast<std::uint8_t>(type & 0xFF)};
    headers.push_back(header);
  }
  return headers;
}

std::string format_mac(const MacAddress& mac) {
  return fmt::format("{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", mac[0], mac[1], mac[2], mac[3], mac[4], mac[5]);
}

MacAddress parse_mac(const std::string& text) {
  // Exactly six two-digit hex bytes joined by ':' (what format_mac writes): a peer's
  // address is hostile input, so no partial or oversized field is accepted.
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  MacAddress mac{};
  bool good = text.size() == 17;
  for (std::size_t i = 0; good && i < 6; ++i) {
    int high = hex(text[3 * i]), low = hex(text[3 * i + 1]);
    good = high >= 0 && low >= 0 && (i == 5 || text[3 * i + 2] == ':');
    mac[i] = static_cast<std::uint8_t>(high * 16 + low);
  }
  if (!good) throw std::runtime_error("nic transport: bad MAC address '" + text.substr(0, 32) + "'");
  return mac;
}

}  // namespace bsp::transport::nic
