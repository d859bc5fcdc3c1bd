// transport/registry.cc: the name -> factory table behind --transport=NAME.
#include "transport/registry.h"

#include <fmt/format.h>

#include <map>
#include <stdexcept>

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
  return found->second(config);
}

std::vector<std::string> transport_names() {
  std::vector<std::string> names;
  for (const auto& [name, factory] : factories()) names.push_back(name);
  return names;
}

}  // namespace bsp::transport
