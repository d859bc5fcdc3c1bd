// recovery/hybrid_channel.cc: shm for this host's peers, the network for the others
// (hybrid_channel.h).
#include "recovery/hybrid_channel.h"

#include <sched.h>

#include <algorithm>
#include <vector>

#include "recovery/passthrough_channel.h"
#include "recovery/reliable_channel.h"
#include "recovery/wait_for_fd.h"

namespace bsp::recovery {
namespace {

class HybridChannel final : public Channel {
 public:
  HybridChannel(std::unique_ptr<transport::Transport> shell, const ChannelConfig& config)
      : shell_(std::move(shell)), paths_(*shell_->path_split()), config_(config) {
    // Built only when the hybrid has both kinds of peers (make_channel uses the one
    // path alone otherwise).
    std::unique_ptr<transport::Transport> local = paths_.release_local();
    local_transport_ = local.get();
    local_ = make_passthrough_channel(std::move(local), config);
    ChannelConfig network_config = config;
    network_config.spin_us = 0;  // this channel spins on both paths itself
    network_config.also_wait_fd = local_transport_->wait_fd();
    std::unique_ptr<transport::Transport> network = paths_.release_network();
    network_ = network->capabilities().reliable ? make_passthrough_channel(std::move(network), network_config)
                                                : make_reliable_channel(std::move(network), network_config);
  }

  std::size_t max_payload() const override { return std::min(local_->max_payload(), network_->max_payload()); }

  SendResult send(int peer, std::span<const std::byte> payload) override { return path(peer).send(peer, payload); }

  std::size_t progress(PayloadSink& sink) override { return local_->progress(sink) + network_->progress(sink); }

  bool probe() override { return local_->probe() || network_->probe(); }

  void wait(std::span<const int> awaited, std::chrono::microseconds timeout) override {
    network_awaited_.clear();
    for (int peer : awaited) {
      if (!paths_.is_local(peer)) network_awaited_.push_back(peer);
    }
    using clock = std::chrono::steady_clock;
    const auto start = clock::now();
    auto spin = std::min<std::chrono::microseconds>(std::chrono::microseconds(config_.spin_us), timeout);
    for (unsigned turn = 0;; ++turn) {
      if (clock::now() - start >= spin && !spin_goes_on(spin, config_.spin_extension, timeout)) break;
      if (local_->probe()) return;
      if (turn % 8 == 0 && network_->probe()) return;  // a system call: not every turn
      sched_yield();
    }
    auto left = timeout - std::chrono::duration_cast<std::chrono::microseconds>(clock::now() - start);
    if (left.count() <= 0 || !local_transport_->before_block()) return;
    network_->wait(network_awaited_, left);
    local_transport_->after_block();
  }

  int wait_fd() const override { return network_->wait_fd(); }

  std::byte* stage(int peer, std::size_t size, std::uint64_t& token) override {
    return path(peer).stage(peer, size, token);
  }
  std::span<const std::byte> staged(int peer, std::uint64_t token, std::size_t size) override {
    return path(peer).staged(peer, token, size);
  }
  void next_superstep() override { local_->next_superstep(); }
  transport::Staging* staging(int peer) override { return path(peer).staging(peer); }

  bool all_acknowledged() const override { return local_->all_acknowledged() && network_->all_acknowledged(); }

  const ChannelStats& stats() const override {
    stats_ = local_->stats();
    stats_ += network_->stats();
    return stats_;
  }

  const transport::Transport& transport() const override { return network_->transport(); }

 private:
  Channel& path(int peer) { return paths_.is_local(peer) ? *local_ : *network_; }

  std::unique_ptr<transport::Transport> shell_;  // the hybrid, emptied: its peer map
  transport::PathSplit& paths_;
  ChannelConfig config_;
  transport::Transport* local_transport_ = nullptr;  // owned by local_
  std::unique_ptr<Channel> local_, network_;
  std::vector<int> network_awaited_;
  mutable ChannelStats stats_;
};

}  // namespace

std::unique_ptr<Channel> make_hybrid_channel(std::unique_ptr<transport::Transport> transport,
                                             const ChannelConfig& config) {
  return std::make_unique<HybridChannel>(std::move(transport), config);
}

}  // namespace bsp::recovery
