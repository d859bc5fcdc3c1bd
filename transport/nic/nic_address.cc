// transport/nic/nic_address.cc: the published nic address and the check by address.
#include "transport/nic/nic_address.h"

#include <fmt/format.h>
#include <net/if.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <stdexcept>

namespace bsp::transport::nic {
namespace {

constexpr std::size_t kMaxHostName = 255;  // a DNS name's limit; Linux's is 64
constexpr std::size_t kMaxQuoted = 64;     // of a malformed address, in a message

bool visible(char c) { return c > ' ' && c < 0x7f; }

// A bounded, printable rendering of hostile text for an error message.
std::string quoted(std::string_view text) {
  std::string out = "'";
  for (std::size_t i = 0; i < text.size() && i < kMaxQuoted; ++i) {
    char c = text[i];
    out += visible(c) ? std::string(1, c) : fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
  }
  out += text.size() > kMaxQuoted ? "'..." : "'";
  return out;
}

bool valid_interface_name(std::string_view name) {
  return !name.empty() && name.size() < IFNAMSIZ && name != "." && name != ".." &&
         std::all_of(name.begin(), name.end(), [](char c) { return visible(c) && c != '/' && c != ':'; });
}

bool valid_host_name(std::string_view host) {
  return !host.empty() && host.size() <= kMaxHostName && std::all_of(host.begin(), host.end(), visible);
}

bool zero(const MacAddress& mac) {
  return std::all_of(mac.begin(), mac.end(), [](std::uint8_t byte) { return byte == 0; });
}

// Why `local` (a host-local interface) cannot reach `other`; "" if it can.
std::string local_only_reason(const NicAddress& local, const NicAddress& other) {
  bool hosts_differ = !local.host.empty() && !other.host.empty() && local.host != other.host;
  if (!other.host_local() || hosts_differ || other.interface != local.interface) {
    return fmt::format("{} has no Ethernet address and carries frames only within its own host", local.interface);
  }
  return "";
}

}  // namespace

bool NicAddress::host_local() const { return interface == "lo" || zero(mac); }

std::string NicAddress::describe(int pid) const {
  return fmt::format("pid {} (host {}, {} {})", pid, host.empty() ? "unknown" : host, interface, format_mac(mac));
}

std::string this_host_name() {
  char name[HOST_NAME_MAX + 1] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "";
  std::string host(name);
  // Published as the address's last field: nothing a peer would refuse.
  for (char& c : host) c = visible(c) ? c : '_';
  if (host.size() > kMaxHostName) host.resize(kMaxHostName);
  return host;
}

std::string format_address(const NicAddress& address) {
  std::string text = address.interface + "/" + format_mac(address.mac);
  if (!address.host.empty()) text += "/" + address.host;
  return text;
}

NicAddress parse_address(std::string_view text, int pid) {
  auto refuse = [&](std::string_view why) {
    return std::runtime_error(fmt::format(
        "nic transport: pid {} published the address {}, which is not INTERFACE/MAC/HOST: {} (are all processes "
        "of one build and the nic transport?)",
        pid, quoted(text), why));
  };
  NicAddress address;
  std::size_t first = text.find('/');
  if (first == std::string_view::npos) throw refuse("no '/'");
  std::string_view interface = text.substr(0, first);
  std::string_view rest = text.substr(first + 1);
  std::size_t second = rest.find('/');
  std::string_view mac = rest.substr(0, second);  // the whole rest when there is no host
  if (!valid_interface_name(interface)) throw refuse("a bad interface name");
  try {
    address.mac = parse_mac(std::string(mac));
  } catch (const std::runtime_error&) {
    throw refuse("a bad MAC address");
  }
  address.interface = std::string(interface);
  if (second != std::string_view::npos) {
    std::string_view host = rest.substr(second + 1);
    if (!valid_host_name(host)) throw refuse("a bad host name");
    address.host = std::string(host);
  }
  return address;
}

std::string static_reachability_error(const std::vector<NicAddress>& addresses, int pid) {
  const NicAddress& self = addresses.at(static_cast<std::size_t>(pid));
  std::vector<std::string> problems;
  for (int peer = 0; peer < static_cast<int>(addresses.size()); ++peer) {
    if (peer == pid) continue;
    const NicAddress& other = addresses[static_cast<std::size_t>(peer)];
    std::string why = self.host_local() ? local_only_reason(self, other) : "";
    if (why.empty() && other.host_local()) why = local_only_reason(other, self);
    if (why.empty()) continue;
    if (problems.size() == 3) {
      problems.push_back("...");
      break;
    }
    problems.push_back(fmt::format("{} cannot exchange raw Ethernet frames with {}: {}", self.describe(pid),
                                   other.describe(peer), why));
  }
  if (problems.empty()) return "";
  return fmt::format(
      "nic transport: {}. Give every process an interface on one Ethernet segment (--iface=NAME; lo only when all "
      "processes run on one host), or use --transport=udp or --transport=tcp",
      fmt::join(problems, "; "));
}

}  // namespace bsp::transport::nic
