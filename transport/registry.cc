// transport/registry.cc: the name -> factory table behind --transport=NAME.
#include "transport/registry.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <stdexcept>

#include "transport/fault/fault_transport.h"
#include "transport/hybrid_transport.h"

namespace bsp::transport {
namespace {

std::map<std::string, TransportFactory>& factories() {
  static std::map<std::string, TransportFactory> table;
  return table;
}

std::map<std::string, RegisteredOption>& options() {
  static std::map<std::string, RegisteredOption> table;
  return table;
}

}  // namespace

void register_transport(const std::string& name, TransportFactory factory,
                        const std::vector<TransportOption>& options) {
  factories()[name] = std::move(factory);
  for (const TransportOption& option : options) register_transport_option(option, name);
}

void register_transport_option(const TransportOption& option, const std::string& reader) {
  auto [entry, added] = options().try_emplace(option.name, RegisteredOption{option, {}});
  std::vector<std::string>& read_by = entry->second.read_by;
  read_by.insert(std::upper_bound(read_by.begin(), read_by.end(), reader), reader);
}

std::vector<RegisteredOption> transport_options() {
  std::vector<RegisteredOption> all;
  for (const auto& [name, option] : options()) all.push_back(option);
  return all;
}

std::unique_ptr<Transport> create_transport(const std::string& name, const TransportConfig& config) {
  if (std::vector<std::string> parts = hybrid_parts(name); !parts.empty()) {
    if (parts[0] != "shm" || parts[1].empty() || !hybrid_parts(parts[1]).empty() || parts[1] == "shm") {
      throw std::runtime_error(
          fmt::format("unknown transport '{}': a hybrid is shm+NETWORK, with NETWORK one of tcp, udp, nic", name));
    }
    TransportConfig local_config = config;
    local_config.options.erase("fault");  // faults are for the network path
    return std::make_unique<HybridTransport>(create_transport(parts[0], local_config),
                                             create_transport(parts[1], config), config.pid, config.nprocs);
  }
  auto found = factories().find(name);
  if (found == factories().end()) {
    throw std::runtime_error(
        fmt::format("unknown transport '{}' (known: {})", name, fmt::join(transport_names(), ", ")));
  }
  std::unique_ptr<Transport> transport = found->second(config);
  auto fault = config.options.find("fault");
  if (fault == config.options.end() || fault->second.empty()) return transport;
  if (transport->capabilities().reliable) {
    throw std::runtime_error(
        fmt::format("--fault needs a datagram transport (udp, nic): '{}' is a reliable stream", name));
  }
  return wrap_with_faults(std::move(transport), fault->second, config.pid);
}

std::vector<std::string> transport_names() {
  std::vector<std::string> names;
  for (const auto& [name, factory] : factories()) names.push_back(name);
  if (factories().count("shm")) {  // and the hybrids: shm on this host, a network beyond
    for (const auto& [name, factory] : factories()) {
      if (name != "shm") names.push_back("shm+" + name);
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace bsp::transport
