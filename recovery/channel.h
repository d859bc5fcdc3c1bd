// recovery/channel.h: the reliable channel the superstep engine talks to. Paper 001's
// middle layer: handshake and initialisation (make_channel + the transport's connect),
// orderly shutdown (drain until all_acknowledged), unorderly shutdown (destroy it),
// a non-blocking send that fails when no buffer is free, a blocking receive (progress +
// wait), and a probe.
//
// Over a reliable transport (tcp) the channel is a pass-through that only stamps and
// checks the wire header (recovery/wire.h). Over an unreliable one (udp, nic) it is the
// paper's protocol: sequence numbers, one shared buffer pool, receiver-based selective
// retransmission and a pluggable acknowledgement policy.
//
// Threading: one thread (the BSPlib engine's) calls everything.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "auth/mac.h"
#include "recovery/spin_policy.h"
#include "recovery/stats.h"
#include "transport/transport.h"

namespace bsp::recovery {

enum class SendResult {
  ok,         // payload copied into a buffer; the channel owns its delivery now
  no_buffer,  // no free buffer: call progress() (consume, get acks) and send again
};

// Receives in-order payloads from progress().
class PayloadSink {
 public:
  virtual ~PayloadSink() = default;
  // The next payload from peer, in the order peer sent them. Bytes valid during the call.
  virtual void on_payload(int peer, std::span<const std::byte> payload) = 0;
  // Peer is gone (connection closed): the job cannot finish normally.
  virtual void on_peer_lost(int peer, std::string_view why) = 0;
  // Placement (transport.h's FrameSink::place_frame): where the next payload from peer,
  // `size` bytes, may be written directly (exactly size bytes), or empty to receive it by
  // on_payload. Room given is filled and confirmed by on_payload_placed, in order, before
  // any other payload from peer, unless peer is reported lost first.
  virtual std::span<std::byte> payload_room(int /*peer*/, std::size_t /*size*/) { return {}; }
  virtual void on_payload_placed(int /*peer*/) {}
  // Room given and not confirmed is given up: nothing of it is stored (a datagram read
  // into it that did not verify, or was no payload in order). A sink that places must
  // also let payload_room be asked again while room is outstanding: the new room replaces
  // it and, being no larger, begins at the same place (udp confirms a verified prefix so).
  virtual void payload_abandoned(int /*peer*/) {}
};

struct ChannelConfig {
  int pid = 0;
  int nprocs = 1;
  std::uint32_t job_id = 0;
  std::size_t buffers = 0;            // shared pool size n (0: the layer's default)
  std::string ack_policy = "buffer";  // "buffer" (paper 001), "every", "pupa"
  int spin_us = 50;                   // wait(): poll this long before blocking (0: block at once)
  SpinExtension spin_extension;       // wait(): and on while the machine runs only the job (shm, tcp)
  auth::Key secret{};                 // the job's secret (auth/job_secret.h): frames carry a MAC
  int also_wait_fd = -1;              // wait() also ends when this descriptor is readable (hybrid)
};

class Channel {
 public:
  virtual ~Channel() = default;

  // Largest payload send() accepts, in bytes.
  virtual std::size_t max_payload() const = 0;

  // Non-blocking send of one payload (at most max_payload() bytes) to peer != own pid.
  virtual SendResult send(int peer, std::span<const std::byte> payload) = 0;

  // Runs the protocol once without blocking: transmits what is queued, receives what has
  // arrived, sends acks / retransmission requests owed, resends what was asked for.
  // In-order payloads go to sink. Returns the number of payloads delivered.
  virtual std::size_t progress(PayloadSink& sink) = 0;

  // True when progress() has something to deliver or work to do right now.
  virtual bool probe() = 0;

  // Blocks until progress() may have work or until timeout. awaited: the peers the engine
  // is waiting to hear from (a silent one may be probed: tail-loss recovery).
  virtual void wait(std::span<const int> awaited, std::chrono::microseconds timeout) = 0;

  // The descriptor wait() blocks on (for callers that add their own, e.g. the control
  // plane's socket).
  virtual int wait_fd() const = 0;

  // True when every payload sent has been acknowledged (and nothing is queued): orderly
  // shutdown calls progress() until this holds.
  virtual bool all_acknowledged() const = 0;

  virtual const ChannelStats& stats() const = 0;

  // Push-Pull's pulled path, where the transport to peer shares memory (transport.h's
  // stage / staged / next_superstep); by default there is none.
  virtual std::byte* stage(int /*peer*/, std::size_t /*size*/, std::uint64_t& /*token*/) { return nullptr; }
  virtual std::span<const std::byte> staged(int /*peer*/, std::uint64_t /*token*/, std::size_t /*size*/) { return {}; }
  virtual void next_superstep() {}
  // The staging capability of the path to peer (single copies go through it), or nullptr.
  virtual transport::Staging* staging(int /*peer*/) { return nullptr; }

  virtual const transport::Transport& transport() const = 0;
};

// Builds the channel for a connected transport: a pass-through when the transport is
// reliable, the recovery protocol otherwise, and for a hybrid (transport/hybrid_transport.h)
// one of those per path behind one channel (recovery/hybrid_channel.h).
std::unique_ptr<Channel> make_channel(std::unique_ptr<transport::Transport> transport, const ChannelConfig& config);

}  // namespace bsp::recovery
