// transport/registry.h: transports pick themselves by name, so `--transport=NAME` needs
// no switch statement in the engine. Each transport's .cc registers a factory with a
// static TransportRegistration (its library is alwayslink so the linker keeps it), with
// the specs of the options it reads (option_spec.h): bsprun's option table is made from them.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "transport/option_spec.h"
#include "transport/transport.h"

namespace bsp::transport {

using TransportFactory = std::function<std::unique_ptr<Transport>(const TransportConfig& config)>;

// Adds a factory under name (at static-initialisation time), and the options it reads.
void register_transport(const std::string& name, TransportFactory factory,
                        const std::vector<TransportOption>& options = {});

// Adds an option read by something other than a transport's factory (a decorator).
void register_transport_option(const TransportOption& option, const std::string& reader);

// An option of the registered transports, once however many read it (shared ones are
// defined once, in shared_options.h), with who reads it.
struct RegisteredOption {
  TransportOption option;
  std::vector<std::string> read_by;  // transport names, sorted
};
// Every registered option, sorted by name.
std::vector<RegisteredOption> transport_options();

// Builds the transport called name; throws std::runtime_error naming the known ones
// when there is no such transport. With a non-empty option "fault" (a fault spec, see
// fault/fault_transport.h) the transport is wrapped in the fault decorator; a reliable
// transport (tcp) refuses it, since its stream cannot lose a frame.
std::unique_ptr<Transport> create_transport(const std::string& name, const TransportConfig& config);

// Names of every registered transport and of the hybrids (shm+NETWORK), sorted.
std::vector<std::string> transport_names();

struct TransportRegistration {
  TransportRegistration(const std::string& name, TransportFactory factory,
                        const std::vector<TransportOption>& options = {}) {
    register_transport(name, std::move(factory), options);
  }
};

struct TransportOptionRegistration {
  TransportOptionRegistration(const TransportOption& option, const std::string& reader) {
    register_transport_option(option, reader);
  }
};

}  // namespace bsp::transport
