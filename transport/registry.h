// transport/registry.h: transports pick themselves by name, so `--transport=NAME` needs
// no switch statement in the engine. Each transport's .cc registers a factory with a
// static TransportRegistration (its library is alwayslink so the linker keeps it).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "transport/transport.h"

namespace bsp::transport {

using TransportFactory =
    std::function<std::unique_ptr<Transport>(const TransportConfig& config)>;

// Adds a factory under name (at static-initialisation time).
void register_transport(const std::string& name, TransportFactory factory);

// Builds the transport called name; throws std::runtime_error naming the known ones
// when there is no such transport. With a non-empty option "fault" (a fault spec, see
// fault/fault_transport.h) the transport is wrapped in the fault decorator; a reliable
// transport (tcp) refuses it, since its stream cannot lose a frame.
std::unique_ptr<Transport> create_transport(const std::string& name,
                                            const TransportConfig& config);

// Names of every registered transport and of the hybrids (shm+NETWORK), sorted.
std::vector<std::string> transport_names();

struct TransportRegistration {
  TransportRegistration(const std::string& name, TransportFactory factory) {
    register_transport(name, std::move(factory));
  }
};

}  // namespace bsp::transport
