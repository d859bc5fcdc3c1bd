// transport/transmit_hook.h: the optional "gathered send" capability (paper 001, §2.3) of
// a transport that queues frames before handing them to the kernel (nic's TX ring): it
// calls the hook on each queued frame just before it goes, so the layer above can write
// fresh protocol fields (a piggy-backed ack) and reseal it. The frame's length must not
// change. Transport::transmit_hooks() returns it, or nullptr for a transport without one.
#pragma once

#include <functional>
#include <span>

namespace bsp::transport {

using TransmitHook = std::function<void(int peer, std::span<std::byte> frame)>;

class TransmitHooks {
 public:
  virtual ~TransmitHooks() = default;
  // Replaces the hook; an empty one removes it.
  virtual void set_transmit_hook(TransmitHook hook) = 0;
};

}  // namespace bsp::transport
