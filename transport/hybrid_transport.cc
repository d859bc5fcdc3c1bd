// transport/hybrid_transport.cc: shm for this host's peers, a network transport for the
// others (hybrid_transport.h).
#include "transport/hybrid_transport.h"

#include <fmt/format.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>

namespace bsp::transport {
namespace {

constexpr char kPrefix[] = "hybrid:";

}  // namespace

std::vector<std::string> hybrid_parts(const std::string& name) {
  auto plus = name.find('+');
  if (plus == std::string::npos) return {};
  return {name.substr(0, plus), name.substr(plus + 1)};
}

std::optional<std::pair<std::string, std::string>> split_hybrid_address(const std::string& address) {
  auto bar = address.find('|');
  if (address.rfind(kPrefix, 0) != 0 || bar == std::string::npos) return std::nullopt;
  return std::pair{address.substr(sizeof kPrefix - 1, bar - (sizeof kPrefix - 1)), address.substr(bar + 1)};
}

HybridTransport::HybridTransport(std::unique_ptr<Transport> local, std::unique_ptr<Transport> network, int pid,
                                 int nprocs)
    : local_(std::move(local)),
      network_(std::move(network)),
      pid_(pid),
      nprocs_(nprocs),
      name_(fmt::format("{}+{}", local_->name(), network_->name())),
      local_peer_(static_cast<std::size_t>(nprocs), false) {}

Capabilities HybridTransport::capabilities() const {
  Capabilities local = local_->capabilities(), network = network_->capabilities();
  Capabilities both;
  both.mtu = std::min(local.mtu, network.mtu);
  both.reliable = local.reliable && network.reliable;
  both.authenticated_links = local.authenticated_links && network.authenticated_links;
  both.intact = local.intact && network.intact;
  return both;
}

std::string HybridTransport::local_address() {
  return fmt::format("{}{}|{}", kPrefix, local_->local_address(), network_->local_address());
}

void HybridTransport::connect(const std::vector<std::string>& addresses) {
  std::vector<std::string> local_addresses(addresses.size()), network_addresses(addresses.size());
  for (std::size_t peer = 0; peer < addresses.size(); ++peer) {
    const std::string& address = addresses[peer];
    auto parts = split_hybrid_address(address);
    if (!parts) {
      throw std::runtime_error(
          fmt::format("{} transport: pid {}'s address '{}' is not a {} address (did every "
                      "process get the same --transport?)",
                      name_, peer, address, name_));
    }
    local_addresses[peer] = std::move(parts->first);
    network_addresses[peer] = std::move(parts->second);
  }
  for (std::size_t peer = 0; peer < addresses.size() && peer < local_peer_.size(); ++peer) {
    local_peer_[peer] = static_cast<int>(peer) != pid_ && local_->reaches(local_addresses[peer]);
    if (!local_peer_[peer]) local_addresses[peer].clear();
  }
  if (has_local_peers()) local_->connect(local_addresses);
  if (has_network_peers()) network_->connect(network_addresses);
}

void HybridTransport::decorate_paths(const Decorator& decorate) {
  local_ = decorate(std::move(local_));
  network_ = decorate(std::move(network_));
}

bool HybridTransport::has_local_peers() const {
  return std::find(local_peer_.begin(), local_peer_.end(), true) != local_peer_.end();
}

bool HybridTransport::has_network_peers() const {
  for (int peer = 0; peer < nprocs_; ++peer) {
    if (peer != pid_ && !local_peer_[static_cast<std::size_t>(peer)]) return true;
  }
  return false;
}

SendStatus HybridTransport::send(int peer, std::span<const std::byte> frame) {
  return is_local(peer) ? local_->send(peer, frame) : network_->send(peer, frame);
}

SendStatus HybridTransport::send_gathered(int peer, std::span<const std::byte> head, std::span<const std::byte> body) {
  return is_local(peer) ? local_->send_gathered(peer, head, body) : network_->send_gathered(peer, head, body);
}

std::size_t HybridTransport::receive(FrameSink& sink, std::size_t max_frames) {
  std::size_t delivered = has_local_peers() ? local_->receive(sink, max_frames) : 0;
  if (has_network_peers() && delivered < max_frames) delivered += network_->receive(sink, max_frames - delivered);
  return delivered;
}

bool HybridTransport::flush() {
  bool local = local_->flush();
  return network_->flush() && local;
}

int HybridTransport::wait_fd() const {
  if (!has_network_peers()) return local_->wait_fd();
  if (!has_local_peers()) return network_->wait_fd();
  if (!epoll_) {
    epoll_.reset(::epoll_create1(EPOLL_CLOEXEC));
    for (int fd : {local_->wait_fd(), network_->wait_fd()}) {
      epoll_event event{};
      event.events = EPOLLIN;
      event.data.fd = fd;
      ::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &event);
    }
  }
  return epoll_.get();
}

bool HybridTransport::ready() {
  return (has_local_peers() && local_->ready()) || (has_network_peers() && network_->ready());
}

bool HybridTransport::before_block() { return !has_local_peers() || local_->before_block(); }

void HybridTransport::after_block() {
  if (has_local_peers()) local_->after_block();
}

}  // namespace bsp::transport
