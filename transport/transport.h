// transport/transport.h: the one interface every messaging layer implements (tcp, udp,
// nic, shm, and decorators such as fault). A transport moves frames of at most mtu()
// bytes between the processes of one job; it knows nothing of supersteps or recovery.
//
// The interface holds what every transport needs (set-up, data path, waiting); what only
// some have (staging, a transmit hook, two paths) sits behind small interfaces that
// staging(), transmit_hooks() and path_split() return. Decorators (fault, trace) derive
// from ForwardingTransport (transport/forwarding_transport.h) and override only what they
// change.
//
// Contract (docs/DESIGN.md, "Transports"; tests/transport/contract_test.cc):
//  - Set-up may throw std::runtime_error with a message a user can act on.
//  - The data path never throws and never blocks: back-pressure is SendStatus::busy and
//    the caller makes progress (receives) and retries; errors reach the FrameSink.
//  - Frames are opaque here: the reliable layer above (recovery/) writes and checks the
//    wire header. A reliable transport (tcp) delivers each peer's frames once, intact and
//    in order; an unreliable one (udp, nic) may drop, duplicate or reorder them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "auth/mac.h"
#include "transport/path_split.h"
#include "transport/staging.h"
#include "transport/transmit_hook.h"

namespace bsp::transport {

// A field every frame for this process carries (the layer above says which: job id and
// destination pid), so a transport that sees foreign traffic (nic) can have the kernel
// drop the rest: bytes [offset, offset + size) of the frame equal value, little-endian.
struct FrameMatch {
  std::size_t offset = 0;
  std::size_t size = 0;  // 1, 2 or 4
  std::uint32_t value = 0;
};

// FrameSink::on_frame's peer for a frame from an address that is no process of the job.
inline constexpr int kNotAMember = -2;

// What the process knows about itself when it builds its transport.
struct TransportConfig {
  int pid = 0;
  int nprocs = 1;
  std::uint32_t job_id = 0;
  // Transport-specific settings from the command line / BSP_* environment, by name
  // (e.g. "rcvbuf" -> "16777216", "iface" -> "lo", "fault" -> "drop=0.05,seed=7").
  std::map<std::string, std::string> options;
  // The job's secret (auth/job_secret.h): a transport that admits connections (tcp)
  // proves with it that a peer belongs to the job.
  auth::Key secret{};
  // Fields every frame addressed to this process matches (see FrameMatch).
  std::vector<FrameMatch> receive_filter{};
  // Frames of the reliable layer's pool when the user set them (--buffers; 0: the
  // transport's suggestion, Capabilities::pool_frames, or else the layer's default).
  std::size_t pool_frames = 0;
};

struct Capabilities {
  std::size_t mtu = 0;    // largest frame send() accepts, in bytes (header included)
  bool reliable = false;  // true: frames arrive once, intact, in order per peer
  // true: every link was authenticated with the job's secret when it was set up, and
  // nobody else can put frames into it (tcp's connections): frames need no MAC of their own.
  bool authenticated_links = false;
  // true: frames cannot be damaged on their way (memory, not a wire): no checksum needed.
  bool intact = false;
  // true: ready() reads memory (no system call) and the peers have cores of their own:
  // worth polling in a tight loop before yielding the core.
  bool poll_without_yielding = false;
  // true: ready() reads memory (no system call), so the reliable layer's waiting loop
  // asks it between yields instead of poll(2) on wait_fd() (nic's receive ring).
  bool ready_in_memory = false;
  // Frames the transport suggests for the reliable layer's shared pool when the user
  // set none (0: the layer's own default). nic's 64 KiB frames on lo would otherwise get
  // the layer's floor of 1024 frames, 64 MiB; a quarter of that measured as fast.
  std::size_t pool_frames = 0;
};

// The reliable layer above a datagram transport lets one link hold at most
// pool / kLinkWindowDivisor / (p - 1) frames unacknowledged (recovery/protocol_constants.h),
// so the peers of a process together at most pool / kLinkWindowDivisor data frames in
// flight to it: a receive buffer of that many frames (and room for their acks and probes)
// never drops one of them for want of room.
inline constexpr std::size_t kLinkWindowDivisor = 2;

enum class SendStatus {
  sent,  // the frame was copied (or handed to the kernel); the caller may reuse it
  busy,  // no room now: make progress (receive, flush) and send again
};

// One frame to send, for send_batch().
struct OutFrame {
  int peer = 0;
  std::span<const std::byte> bytes;
};

// Receives what the transport delivers. Called only from inside receive().
class FrameSink {
 public:
  virtual ~FrameSink() = default;
  // A frame from peer (or -1 when the transport cannot tell who sent it, or
  // kNotAMember when it knows the sender is no process of this job). The bytes are
  // valid only during the call; copy what must outlive it.
  virtual void on_frame(int peer, std::span<const std::byte> frame) = 0;
  // The connection to peer is gone (closed, reset): the job cannot continue normally.
  virtual void on_peer_lost(int peer, std::string_view why) = 0;

  // Placement, for a transport that reads a byte stream (tcp): instead of reading a large
  // frame into its own buffer and handing it to on_frame (where the sink copies it on), it
  // may read the frame's tail straight into memory the sink names. placement_head(): how
  // many leading bytes of a frame the sink must see to decide (0: it never places).
  virtual std::size_t placement_head() const { return 0; }
  // A frame of `length` bytes from peer is arriving and `head` (its first placement_head()
  // bytes) is here: where its other length - head.size() bytes go (exactly that many), or
  // empty to have the frame delivered by on_frame as usual. A transport that was given room
  // writes only there, and only those bytes, then calls on_frame_placed (or reports peer
  // lost); it asks for no other placement from peer meanwhile.
  virtual std::span<std::byte> place_frame(int /*peer*/, std::span<const std::byte> /*head*/, std::size_t /*length*/) {
    return {};
  }
  // The frame whose tail place_frame's room now holds, in its turn among peer's frames.
  virtual void on_frame_placed(int /*peer*/, std::span<const std::byte> /*head*/) {}

  // Datagram placement, for a transport that reads whole datagrams (udp): before reading
  // one, it may ask where the payloads of up to `frames` frames of exactly `frame_size`
  // bytes (the datagram's segments) should go, each frame's first placement_head() bytes
  // going elsewhere. The answer names the peer the sink expects them from and a room of
  // frames × (frame_size − placement_head()) bytes, or is empty (read as usual). The
  // transport then reads the datagram scattered so: frame i's head into its own buffer, its
  // payload at room + i × (frame_size − head). Either way it answers with
  // on_datagram_placed, at once: the frames it cut from the datagram (from `peer`, or any
  // other sender), or none when the datagram did not have that shape (it then delivers its
  // frames by on_frame from its own buffer). The sink takes every frame given (the room's
  // bytes are untrusted until it has checked them) and gives the room up or keeps what it
  // accepted in place; it must not use the room after the call.
  struct DatagramRoom {
    int peer = -1;
    std::span<std::byte> room;
  };
  struct PlacedFrame {
    std::span<const std::byte> head;     // placement_head() bytes (fewer: a short datagram)
    std::span<const std::byte> payload;  // inside the room
  };
  virtual DatagramRoom datagram_room(std::size_t /*frame_size*/, std::size_t /*frames*/) { return {}; }
  virtual void on_datagram_placed(int /*from*/, std::span<const PlacedFrame> /*frames*/) {}
};

class Transport {
 public:
  virtual ~Transport() = default;

  virtual std::string_view name() const = 0;
  virtual Capabilities capabilities() const = 0;

  // ---- Set-up (collective, driven by the control plane) ----
  // This process's address, published to every peer through the control plane.
  virtual std::string local_address() = 0;
  // Connects to every peer; addresses[i] is pid i's local_address(). Returns when the
  // mesh is usable. Throws std::runtime_error on failure.
  virtual void connect(const std::vector<std::string>& addresses) = 0;

  // Whether this transport can reach the process at `address` (a peer's local_address()).
  // All of them, except for a transport limited to one host (shm), asked by a hybrid.
  virtual bool reaches(const std::string& address) const { return !address.empty(); }

  // ---- Data path ----
  // Sends one frame of at most capabilities().mtu bytes to peer (peer != own pid). The
  // transport may hold frames back to send them in one batch: they leave at the latest
  // at the next flush() or receive().
  virtual SendStatus send(int peer, std::span<const std::byte> frame) = 0;
  // The same for a frame given in two pieces, [head][body], sent as one frame: a
  // transport that can gather (tcp's sendmsg, shm's reserve-then-copy) sends the body
  // from where it lies instead of the caller copying it next to the head first.
  virtual SendStatus send_gathered(int peer, std::span<const std::byte> head, std::span<const std::byte> body);
  // Sends frames from the front until one is refused; returns how many were sent.
  virtual std::size_t send_batch(std::span<const OutFrame> frames) {
    std::size_t sent = 0;
    for (const OutFrame& frame : frames) {
      if (send(frame.peer, frame.bytes) != SendStatus::sent) break;
      ++sent;
    }
    return sent;
  }
  // Delivers up to max_frames arrived frames to sink without blocking; returns how many.
  virtual std::size_t receive(FrameSink& sink, std::size_t max_frames) = 0;
  // Pushes out bytes queued inside the transport; true when nothing remains queued.
  virtual bool flush() = 0;
  // A descriptor (epoll/poll-able) that is readable when receive() may deliver frames
  // or flush() may progress. Valid after connect().
  virtual int wait_fd() const = 0;

  // ---- Waiting (spin, then block on wait_fd()) ----
  // True when receive() has frames now. The default asks poll(2); a transport that can
  // tell without a system call (shm: compare ring indices) says so cheaply, since the
  // waiting loop asks while it spins.
  virtual bool ready();
  // Called just before blocking on wait_fd(). A transport whose peers wake it only on
  // request (shm) asks for a wake-up here; returns false when frames came meanwhile
  // (do not block). after_block() follows every true answer, once the wait is over.
  virtual bool before_block() { return true; }
  virtual void after_block() {}

  // ---- Optional capabilities (nullptr: this transport has none) ----
  // Push-Pull staging in memory the peers share (shm): transport/staging.h.
  virtual Staging* staging() { return nullptr; }
  // A hook run on each frame just before it leaves (nic's TX ring): transport/transmit_hook.h.
  virtual TransmitHooks* transmit_hooks() { return nullptr; }
  // One path for this host's peers and one for the others (the hybrids): transport/path_split.h.
  virtual PathSplit* path_split() { return nullptr; }

  // A decorator's wrapped transport (nullptr for a real one), to find a layer by type.
  virtual const Transport* wrapped() const { return nullptr; }
};

}  // namespace bsp::transport
