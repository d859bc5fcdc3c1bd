// transport/forwarding_transport.h: the base of every decorator (fault, trace): it owns
// the transport it wraps and forwards every call to it, so a decorator overrides only what
// it changes (as LevelDB's EnvWrapper does for Env). decorate() puts a decorator around a
// transport, or around each path of a hybrid, never around the pair: the channel layer
// must still see the hybrid's two paths (transport/path_split.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "transport/transport.h"

namespace bsp::transport {

class ForwardingTransport : public Transport {
 public:
  // Throws std::logic_error for a transport of two paths (use decorate()).
  explicit ForwardingTransport(std::unique_ptr<Transport> inner);

  std::string_view name() const override { return inner_->name(); }
  Capabilities capabilities() const override { return inner_->capabilities(); }
  std::string local_address() override { return inner_->local_address(); }
  void connect(const std::vector<std::string>& addresses) override { inner_->connect(addresses); }
  bool reaches(const std::string& address) const override { return inner_->reaches(address); }

  SendStatus send(int peer, std::span<const std::byte> frame) override { return inner_->send(peer, frame); }
  SendStatus send_gathered(int peer, std::span<const std::byte> head, std::span<const std::byte> body) override {
    return inner_->send_gathered(peer, head, body);
  }
  std::size_t send_batch(std::span<const OutFrame> frames) override { return inner_->send_batch(frames); }
  std::size_t receive(FrameSink& sink, std::size_t max_frames) override { return inner_->receive(sink, max_frames); }
  bool flush() override { return inner_->flush(); }
  int wait_fd() const override { return inner_->wait_fd(); }

  bool ready() override { return inner_->ready(); }
  bool before_block() override { return inner_->before_block(); }
  void after_block() override { inner_->after_block(); }

  Staging* staging() override { return inner_->staging(); }
  TransmitHooks* transmit_hooks() override { return inner_->transmit_hooks(); }
  const Transport* wrapped() const override { return inner_.get(); }

 protected:
  Transport& inner() { return *inner_; }
  const Transport& inner() const { return *inner_; }

 private:
  std::unique_ptr<Transport> inner_;
};

// decorator(transport), or, for a transport of two paths, the same transport with
// decorator(path) in place of each path.
std::unique_ptr<Transport> decorate(std::unique_ptr<Transport> transport, const Decorator& decorator);

}  // namespace bsp::transport
