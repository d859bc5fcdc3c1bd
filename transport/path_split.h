// transport/path_split.h: the optional capability of a transport made of one path for the
// processes of this host and one for the rest (the hybrids shm+NETWORK). The channel layer
// builds one channel per path (recovery/make_channel.cc), and a decorator is put around
// each path rather than around the pair (decorate() in transport/forwarding_transport.h),
// so a traced or faulty hybrid still runs shm's pass-through next to the network's channel.
// Transport::path_split() returns it, or nullptr for a transport of one path.
#pragma once

#include <functional>
#include <memory>

namespace bsp::transport {

class Transport;

// Builds a decorated transport around a path (or returns the path as it is).
using Decorator = std::function<std::unique_ptr<Transport>(std::unique_ptr<Transport> path)>;

class PathSplit {
 public:
  virtual ~PathSplit() = default;
  // After connect(): which peers go through the local path.
  virtual bool is_local(int peer) const = 0;
  virtual bool has_local_peers() const = 0;
  virtual bool has_network_peers() const = 0;
  virtual Transport& local() = 0;
  virtual Transport& network() = 0;
  // For the channel layer, which then owns the two paths (this shell keeps the peer map).
  virtual std::unique_ptr<Transport> release_local() = 0;
  virtual std::unique_ptr<Transport> release_network() = 0;
  // Puts decorate(path) in place of each path. Before connect().
  virtual void decorate_paths(const Decorator& decorate) = 0;
};

}  // namespace bsp::transport
