// transport/hybrid_transport.h: a job's two paths in one transport: a local one (shm)
// for the processes of this host and a network one (tcp, udp, nic) for the others
// (`--transport=shm+udp`). Its address carries both ("hybrid:<local>|<network>");
// connect() asks the local transport which peers it reaches and connects it to those
// only, and the network transport to the rest (nothing when every peer is local).
//
// The channel layer (recovery/make_channel) sees a hybrid and builds one channel per
// path — a pass-through over shm, the recovery protocol over udp or nic — so the
// engine above is unchanged. As a Transport of its own it routes frames by peer too.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "transport/file_descriptor.h"
#include "transport/transport.h"

namespace bsp::transport {

class HybridTransport final : public Transport, public PathSplit {
 public:
  HybridTransport(std::unique_ptr<Transport> local, std::unique_ptr<Transport> network, int pid, int nprocs);

  std::string_view name() const override { return name_; }
  Capabilities capabilities() const override;
  std::string local_address() override;
  void connect(const std::vector<std::string>& addresses) override;
  SendStatus send(int peer, std::span<const std::byte> frame) override;
  SendStatus send_gathered(int peer, std::span<const std::byte> head, std::span<const std::byte> body) override;
  std::size_t receive(FrameSink& sink, std::size_t max_frames) override;
  bool flush() override;
  int wait_fd() const override;
  bool ready() override;
  bool before_block() override;
  void after_block() override;
  const Transport* wrapped() const override { return network_.get(); }
  PathSplit* path_split() override { return this; }

  // PathSplit:
  bool is_local(int peer) const override { return local_peer_[static_cast<std::size_t>(peer)]; }
  bool has_local_peers() const override;
  bool has_network_peers() const override;
  Transport& local() override { return *local_; }
  Transport& network() override { return *network_; }
  std::unique_ptr<Transport> release_local() override { return std::move(local_); }
  std::unique_ptr<Transport> release_network() override { return std::move(network_); }
  void decorate_paths(const Decorator& decorate) override;

 private:
  std::unique_ptr<Transport> local_, network_;
  int pid_, nprocs_;
  std::string name_;
  std::vector<bool> local_peer_;
  mutable FileDescriptor epoll_;  // both parts' descriptors, made on first use
};

// "shm+udp" -> {"shm", "udp"}; empty when name has no '+'.
std::vector<std::string> hybrid_parts(const std::string& name);

// A hybrid transport's address "hybrid:LOCAL|NETWORK" -> {LOCAL, NETWORK}; nullopt when
// the address is not one.
std::optional<std::pair<std::string, std::string>> split_hybrid_address(const std::string& address);

}  // namespace bsp::transport
