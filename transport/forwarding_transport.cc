// transport/forwarding_transport.cc: the decorators' base and decorate()
// (forwarding_transport.h).
#include "transport/forwarding_transport.h"

#include <stdexcept>
#include <string>

namespace bsp::transport {

ForwardingTransport::ForwardingTransport(std::unique_ptr<Transport> inner) : inner_(std::move(inner)) {
  if (inner_->path_split() != nullptr) {
    throw std::logic_error("a decorator around the transport " + std::string(inner_->name()) +
                           " of two paths would hide them from the channel layer: use decorate()");
  }
}

std::unique_ptr<Transport> decorate(std::unique_ptr<Transport> transport, const Decorator& decorator) {
  if (PathSplit* paths = transport->path_split()) {
    paths->decorate_paths(decorator);
    return transport;
  }
  return decorator(std::move(transport));
}

}  // namespace bsp::transport
