// bsplib/launch/host_addresses.cc: this host's IPv4 addresses (getifaddrs, getaddrinfo).
#include "bsplib/launch/host_addresses.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <unistd.h>

#include <algorithm>
#include <memory>

namespace bsp::launch {
namespace {

struct Address {
  std::string interface;
  std::string text;
  bool loopback;
};

std::vector<Address> addresses_of_interfaces() {
  std::vector<Address> found;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return found;
  std::unique_ptr<ifaddrs, void (*)(ifaddrs*)> owner(list, ::freeifaddrs);
  for (ifaddrs* entry = list; entry; entry = entry->ifa_next) {
    if (!entry->ifa_addr || entry->ifa_addr->sa_family != AF_INET || !(entry->ifa_flags & IFF_UP)) continue;
    char text[INET_ADDRSTRLEN];
    ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(entry->ifa_addr)->sin_addr, text, sizeof text);
    found.push_back({entry->ifa_name, text, (entry->ifa_flags & IFF_LOOPBACK) != 0});
  }
  return found;
}

}  // namespace

std::string interface_address(const std::string& name) {
  for (const Address& address : addresses_of_interfaces()) {
    if (name.empty() ? !address.loopback : address.interface == name) return address.text;
  }
  return {};
}

std::vector<std::string> local_addresses() {
  std::vector<Address> all = addresses_of_interfaces();
  std::stable_partition(all.begin(), all.end(), [](const Address& a) { return !a.loopback; });
  std::vector<std::string> texts;
  for (const Address& address : all) {
    if (std::find(texts.begin(), texts.end(), address.text) == texts.end()) texts.push_back(address.text);
  }
  return texts;
}

bool is_this_host(const std::string& host) {
  if (host == "localhost") return true;
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) == 0 && host == name) return true;
  addrinfo hints{};
  hints.ai_family = AF_INET;
  addrinfo* results = nullptr;
  if (::getaddrinfo(host.c_str(), nullptr, &hints, &results) != 0) return false;
  std::unique_ptr<addrinfo, void (*)(addrinfo*)> owner(results, ::freeaddrinfo);
  std::vector<std::string> mine = local_addresses();
  for (addrinfo* result = results; result; result = result->ai_next) {
    char text[INET_ADDRSTRLEN];
    ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(result->ai_addr)->sin_addr, text, sizeof text);
    if (std::find(mine.begin(), mine.end(), text) != mine.end()) return true;
  }
  return false;
}

}  // namespace bsp::launch
