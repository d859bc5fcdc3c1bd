// transport/registry.cc: the name -> factory table behind --transport=NAME.
#include "transport/registry.h"

#include <fmt/format.h>

#include <map>
#include <stdexcept>

#include "transport/fault/fault_transport.h"

namespace bsp::transport {
namespace {

std::map<std::string, TransportFactory>& factories() {
  static std::map<std::string, TransportFactory> table;
  return table;
}

}  // namespace

void register_transport(const std::string& name, TransportFactory factory) {
  factories()[name] = std::move(factory);
}

std::unique_ptr<Transport> create_transport(const std::string& name,
                                            const TransportConfig& config) {
  auto found = factories().find(name);
  if (found == factories().end()) {
    throw std::runtime_error(fmt::format("unknown transport '{}' (known: {})", name,
                                         fmt::join(transport_names(), ", ")));
  }
  std::unique_ptr<Transport> transport = found->second(config);
  auto fault = config.options.find("fault");
  if (fault == config.options.end() || fault->second.empty()) return transport;
  if (transport->capabilities().reliable) {
    throw std::runtime_error(fmt::format("--fault needs a datagram transport (udp, nic): '{}' is a reliable stream", name));
  }
  return wrap_with_faults(std::move(transport), fault->second, config.pid);
}

std::vector<std::string> transport_names() {
  std::vector<std::string> names;
  for (const auto& [name, factory] : factories()) names.push_back(name);
  return names;
}

}  // namespace bsp::transport
