// transport/nic/nic_transport.cc: raw Ethernet frames through PACKET_MMAP rings.
#include "transport/nic/nic_transport.h"

#include <fmt/format.h>
#include <linux/if_packet.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>
#include <stdexcept>

#include "transport/nic/block_ring.h"
#include "transport/nic/gather_sender.h"
#include "transport/nic/nic_address.h"
#include "transport/nic/packet_ring.h"
#include "transport/nic/packet_socket.h"
#include "transport/nic/peer_headers.h"
#include "transport/nic/ring_geometry.h"
#include "transport/nic/segment_check.h"
#include "transport/nic/socket_reader.h"
#include "transport/file_descriptor.h"
#include "transport/option_spec.h"
#include "transport/registry.h"
#include "transport/shared_options.h"
#include "transport/send_errors.h"
#include "transport/socket_buffers.h"

namespace bsp::transport {
namespace {

using nic::kEthernetHeader;

constexpr std::size_t kDefaultMtu = 1500;  // an Ethernet payload, like the paper's
// The largest frame: the wire header's payload length is 16 bits (docs/tuning.md).
constexpr std::size_t kLargestMtu = 65535;
constexpr std::size_t kLoopbackMtu = 65535;  // on lo: measured fastest (docs/tuning.md)
// Ring memory unless rx_ring / tx_ring (frames) say otherwise: ~20k Ethernet frames or
// ~500 of 64 KiB received while the program computes. A receive ring is kernel memory,
// allocated (in 1 MiB blocks) and zeroed whole when the socket is set up: the rings of
// one job's processes stay within kHostRxRingBytes (32 MiB each up to p = 16, then
// shrinking to kLeastRxRingBytes at p = 256). Measured with 256 processes on 2 loaded
// cores: setting up 32 MiB rings took 2.9 s per process on average (11.6 s the slowest),
// 5 MiB ones 0.3-0.5 s (2.5 s), long enough for processes to miss the coordinator's 2 s
// proof deadline; 128 KiB ones 20-50 ms.
constexpr std::size_t kDefaultRxRingBytes = 32u << 20;
constexpr std::size_t kHostRxRingBytes = 512u << 20;
constexpr std::size_t kLeastRxRingBytes = 2u << 20;
// On lo, where frames cost no wire, a smaller ring gets smaller frames rather than fewer
// slots (a V2 slot holds the largest frame, however small the frame in it): as many
// slots as the reliable layer's windows let the peers have in flight to a process (2 per
// peer beyond p = 65), at least kLeastLoopbackRingFrames. With 256 processes and 1 MiB
// rings of 64 KiB slots (15), or of 8 KiB (120), an all-to-all put stalled in overflow
// and resending; with 4 KiB frames (480 slots) it passed. 64 KiB frames up to p = 32,
// 49 KiB at 64, 12 KiB at 128, 2.9 KiB at 256.
constexpr std::size_t kLeastLoopbackRingFrames = 120;
constexpr std::size_t kLoopbackRingFramesPerPeer = 2;
constexpr std::size_t kLeastLoopbackMtu = 2048;
// Nor, on lo, more slots than the peers may have data frames in flight to this process
// (transport::kLinkWindowDivisor of the pool) and this many more per peer for their acks
// and probes: a larger ring only spreads the kernel's copies over memory the caches lose
// (an 8 MiB put at p = 2 went from 5.8-6.1 to 6.7-6.8 GB/s with 160 slots for 384).
constexpr std::size_t kLoopbackControlSlotsPerPeer = 16;
constexpr std::size_t kDefaultTxRingBytes = 4u << 20;
// The reliable layer's pool for frames above 16 KiB: 256 frames of 64 KiB measured as
// fast as the layer's default 1024 (64 MiB), while 128 were slower (docs/tuning.md).
constexpr std::size_t kPoolBytesForLargeFrames = 16u << 20;
// ... but never fewer frames than the reliable layer's link-window floor asks of a pool
// (2 × 2 frames per peer, recovery/protocol_constants.h), or beyond p = 65 its window
// rule breaks. The pool's storage is touched only as frames are in flight.
constexpr std::size_t kPoolFramesPerPeer = 4;
// TPACKET_V3: a block not yet full is handed over after this long (the kernel's unit).
constexpr unsigned kBlockRetireMs = 1;
// How frames are received (v2: a status word per frame; v3: per block) and sent (ring:
// the transmit ring, kicked once per batch; send: sendmmsg gathering header and frame).
// rx=recv (nic/socket_reader.h) reads a large frame's payload straight to where the layer
// above keeps it: one copy in the receiver instead of the ring's two (on lo and veth the
// copy into the ring runs on the sender's CPU, in the softirq of its send). Measured on lo
// with 64 KiB frames it moves CPU from the sender to the receiver but spends as much in
// all (a system call per frame, the sender's pages freed on the receiver's CPU) and puts
// no faster; between two emulated hosts, 16 frames a system call, no faster either
// (docs/figures.md), so the ring stays the default. Placement only in a small
// job, as udp's: among many senders the layer above's guess of the next frame's sender
// fails more often.
constexpr int kPlacementProcesses = 16;
constexpr const char* kDefaultRx = "v2";
constexpr const char* kDefaultTx = "send";
// Bytes of frames the kernel takes from the TX ring before they have left the interface:
// the default socket budget (~200 KB) starved a 100 Mbit/s link behind its queue (56% of
// the wire for one 1400-byte stream; 96% with this).
constexpr int kDefaultSendBuffer = 4 << 20;
// How long the segment check (nic/segment_check.h) may go without hearing anything new
// unless the connect_timeout_ms option says otherwise: 5 s, and 50 ms more per process
// (the processes enter it within milliseconds of each other on an idle machine, as soon
// as the control plane hands out the addresses; much later on a loaded one).
constexpr int kDefaultSegmentCheckMs = 5000;
constexpr int kSegmentCheckMsPerProcess = 50;

// What nic reads from TransportConfig::options (shown by bsprun --help, checked there).
const std::vector<TransportOption>& nic_options() {
  static const std::vector<TransportOption> options = {
      shared_options::iface(),
      shared_options::host(),
      shared_options::mtu(),
      shared_options::sndbuf(),
      shared_options::connect_timeout_ms(),
      number_option("rx-ring", "nic default", "frames in nic's receive ring (16 to 1048576)", 16, 1L << 20),
      number_option("tx-ring", "nic default", "frames in nic's transmit ring (16 to 1048576)", 16, 1L << 20),
      one_of_option("nic-rx", "v2",
                    "how nic receives: v2 (TPACKET_V2 ring, a status word per frame), v3 (TPACKET_V3 blocks; a "
                    "block not yet full waits up to 1 ms) or recv (recvmmsg, a large frame's payload read straight "
                    "to where the reliable layer keeps it)",
                    {"v2", "v3", "recv"}),
      one_of_option("nic-tx", "send",
                    "how nic sends: send (sendmmsg straight from the reliable layer's buffers) or ring (TPACKET_V2 "
                    "transmit ring, frames copied in and refreshed at the kick; needs nic-rx=v2)",
                    {"send", "ring"}),
  };
  return options;
}

class NicTransport final : public Transport, private TransmitHooks {
 public:
  explicit NicTransport(const TransportConfig& config) : config_(config) {
    TransportOptions options("nic", config.options, nic_options());
    std::string name = options.text("iface").value_or(nic::interface_for_address(options.text("host", "127.0.0.1")));
    interface_ = nic::find_interface(name);
    std::size_t link_mtu = interface_.mtu > 0 ? static_cast<std::size_t>(interface_.mtu) : kDefaultMtu;
    std::size_t rx_bytes = std::clamp(kHostRxRingBytes / static_cast<std::size_t>(std::max(config.nprocs, 1)),
                                      kLeastRxRingBytes, kDefaultRxRingBytes);
    std::size_t ring_frames = std::max(
        kLeastLoopbackRingFrames,
        kLoopbackRingFramesPerPeer * static_cast<std::size_t>(std::max(config.nprocs - 1, 0)));
    // The largest frame the interface allows (jumbo frames where it has them), never more;
    // on lo as large as the ring's slots allow.
    std::size_t preferred = name == "lo"
                                ? std::clamp(rx_bytes * 3 / 4 / ring_frames - kEthernetHeader - 128, kLeastLoopbackMtu,
                                             kLoopbackMtu)  // 3/4: whole slots per block
                                : kLargestMtu;
    std::optional<long> mtu = options.number("mtu");
    mtu_ = mtu ? static_cast<std::size_t>(*mtu) : std::min({preferred, link_mtu, kLargestMtu});
    if (mtu_ > link_mtu) {
      throw std::runtime_error(fmt::format("nic transport: mtu {} exceeds {}'s MTU {}", mtu_, name, link_mtu));
    }
    std::string tx = options.text("nic-tx", kDefaultTx);
    std::string rx = options.text("nic-rx", kDefaultRx);
    if ((rx != "v2" && rx != "v3" && rx != "recv") || (tx != "ring" && tx != "send")) {
      throw std::runtime_error(
          fmt::format("nic transport: nic-rx={} nic-tx={}: want v2, v3 or recv, ring or send", rx, tx));
    }
    if (rx != "v2" && tx == "ring") {
      throw std::runtime_error("nic transport: nic-tx=ring needs nic-rx=v2 (the transmit ring is TPACKET_V2)");
    }
    std::size_t slot = kEthernetHeader + mtu_ + 128;  // about one ring slot
    // As many frames as whole blocks of rx_bytes hold (nic/ring_geometry.h).
    nic::RingGeometry blocks = nic::ring_geometry(TPACKET_ALIGN(TPACKET2_HDRLEN + 16), kEthernetHeader + mtu_, 1);
    std::optional<long> rx_ring = options.number("rx-ring");
    std::optional<long> tx_ring = options.number("tx-ring");
    std::size_t rx_frames = rx_ring ? static_cast<std::size_t>(*rx_ring)
                                    : std::max<std::size_t>(1, rx_bytes / blocks.block) * blocks.slots_per_block;
    if (!rx_ring && nic::is_loopback(interface_)) {
      const std::size_t pool = config.pool_frames != 0 ? config.pool_frames : suggested_pool_frames();
      const auto peers = static_cast<std::size_t>(std::max(config.nprocs - 1, 1));
      const std::size_t in_flight = pool / kLinkWindowDivisor + kLoopbackControlSlotsPerPeer * peers;
      if (pool != 0) rx_frames = std::min(rx_frames, std::max(kLeastLoopbackRingFrames, in_flight));
    }
    std::size_t tx_frames = tx_ring ? static_cast<std::size_t>(*tx_ring) : kDefaultTxRingBytes / slot;
    segment_check_ms_ = static_cast<int>(options.number(
        "connect-timeout-ms", kDefaultSegmentCheckMs + kSegmentCheckMsPerProcess * std::max(config.nprocs, 1)));
    if (segment_check_ms_ <= 0) {
      throw std::runtime_error(fmt::format("nic transport: connect_timeout_ms={} must be positive", segment_check_ms_));
    }
    fd_.reset(nic::open_packet_socket());
    size_socket_buffer(fd_.get(), SO_SNDBUF, SO_SNDBUFFORCE,
                       static_cast<int>(options.number("sndbuf", kDefaultSendBuffer)));
    // Bound, filtered and ringed before our address goes to the peers: a frame a peer
    // sends the moment it has the addresses must find our ring, not an unbound socket.
    nic::filter_and_bind(fd_.get(), interface_, config_.receive_filter,
                         nic::data_ether_type(nic::is_loopback(interface_), config_.pid));
    if (rx == "recv") {
      // The socket's queue holds what a ring of rx_bytes would.
      size_socket_buffer(fd_.get(), SO_RCVBUF, SO_RCVBUFFORCE, static_cast<int>(rx_bytes));
      reader_ = std::make_unique<nic::SocketReader>(
          fd_.get(), mtu_, [this](std::span<const std::byte> ethernet) { return claimed_sender(ethernet); });
    } else if (rx == "v3") {
      blocks_ = std::make_unique<nic::BlockRing>(fd_.get(), kEthernetHeader + mtu_, rx_frames, kBlockRetireMs);
    } else {
      rings_ = std::make_unique<nic::PacketRings>(fd_.get(), kEthernetHeader + mtu_, rx_frames,
                                                  tx == "ring" ? tx_frames : 0);
    }
    gather_ = tx == "send";
    rx_mode_ = rx;
  }

  ~NicTransport() override {
    rings_.reset();  // unmapped before the socket closes
    blocks_.reset();
  }

  std::string_view name() const override { return "nic"; }
  Capabilities capabilities() const override {
    Capabilities capabilities{mtu_, false};
    capabilities.ready_in_memory = !reader_ && !blocks_;  // the V2 ring's status words
    capabilities.pool_frames = suggested_pool_frames();
    return capabilities;
  }

  // Frames above 16 KiB: a 16 MiB pool (docs/tuning.md), not the layer's 1024 frames; 0
  // (the layer's default) for smaller ones.
  std::size_t suggested_pool_frames() const {
    if (mtu_ <= kPoolBytesForLargeFrames / 1024) return 0;
    return std::max(kPoolBytesForLargeFrames / mtu_,
                    kPoolFramesPerPeer * static_cast<std::size_t>(std::max(config_.nprocs - 1, 1)));
  }

  // INTERFACE/MAC/HOST (nic/nic_address.h).
  std::string local_address() override {
    return nic::format_address({interface_.name, interface_.mac, nic::this_host_name()});
  }

  // Reads the peers' addresses, refuses pairs that cannot reach each other judging by
  // the addresses alone, then proves the rest by exchanging probes (nic/segment_check.h).
  void connect(const std::vector<std::string>& addresses) override {
    headers_ = nic::connect_peers("nic transport", config_, interface_, addresses,
                                  std::chrono::milliseconds(segment_check_ms_));
    learn_senders();
    if (gather_) sender_ = std::make_unique<nic::GatherSender>(fd_.get(), headers_);
  }

  SendStatus send(int peer, std::span<const std::byte> frame) override {
    if (gather_) {
      // Alone: copied aside and sent in batches (the reliable layer sends in batches).
      if (!sender_->stage(peer, frame)) {
        send_error_ = sender_->last_error();
        return SendStatus::busy;
      }
      if (sender_->batch_full()) flush();
      return SendStatus::sent;
    }
    std::span<std::byte> slot = rings_->reserve(kEthernetHeader + frame.size());
    if (slot.empty()) {
      rings_->kick(hook());
      slot = rings_->reserve(kEthernetHeader + frame.size());
      if (slot.empty()) return SendStatus::busy;
    }
    std::memcpy(slot.data(), headers_[static_cast<std::size_t>(peer)].data(), kEthernetHeader);
    std::memcpy(slot.data() + kEthernetHeader, frame.data(), frame.size());
    rings_->queue(peer);
    if (++unkicked_ >= kKickBatch) flush();
    return SendStatus::sent;
  }

  std::size_t send_batch(std::span<const OutFrame> frames) override {
    if (!gather_) return Transport::send_batch(frames);
    std::size_t sent = sender_->send(frames);
    send_error_ = sender_->last_error();
    return sent;
  }

  std::size_t receive(FrameSink& sink, std::size_t max_frames) override {
    if (unkicked_ > 0 || (sender_ && sender_->has_staged())) flush();  // never sit on frames while waiting
    // The socket cannot send at all (interface down or gone): every peer is cut off,
    // rather than sending again forever.
    int error = gather_ ? send_error_ : rings_->last_error();
    if (error != 0 && permanent_send_error(error) && !reported_down_) {
      reported_down_ = true;
      for (int peer = 0; peer < static_cast<int>(headers_.size()); ++peer) {
        if (peer != config_.pid) {
          sink.on_peer_lost(
              peer, fmt::format("nic transport: sending on {} failed: {}", interface_.name, std::strerror(error)));
        }
      }
    }
    if (reader_) return reader_->receive(sink, max_frames, config_.nprocs <= kPlacementProcesses);
    std::size_t delivered = 0;
    while (delivered < max_frames) {
      std::span<const std::byte> frame = blocks_ ? blocks_->peek() : rings_->peek_received();
      if (frame.empty()) break;
      // A frame cut short by the ring's slot, or no more than an Ethernet header, is dropped.
      const bool whole = blocks_ || rings_->received_whole();
      if (whole && frame.size() > kEthernetHeader && frame.size() <= kEthernetHeader + mtu_) {
        sink.on_frame(-1, frame.subspan(kEthernetHeader));
      } else {
        ++rejected_;
      }
      if (blocks_) {
        blocks_->release();
      } else {
        rings_->release_received();
      }
      ++delivered;
    }
    return delivered;
  }

  bool flush() override {
    unkicked_ = 0;
    if (gather_) {  // only frames sent alone wait here
      bool empty = sender_->send_staged();
      send_error_ = sender_->last_error();
      return empty;
    }
    return rings_->kick(hook()) && !rings_->has_queued();
  }

  int wait_fd() const override { return fd_.get(); }

  // Asked between yields while a superstep waits. With the V2 ring it is the next slot's
  // status word, read in memory, as the bare raw-frame receiver waits. poll(2) here took
  // the socket's receive-queue lock on every ask, the lock the kernel takes to fill this
  // ring, and on veth and lo it fills it in the sender's softirq: the sender's CPU waited
  // on the lock and on the slot's cache line (docs/figures.md).
  bool ready() override { return reader_ || blocks_ ? Transport::ready() : rings_->has_received(); }

  // For --stats: how frames are received, and what was dropped for its length or placed.
  std::string stats() const {
    const std::uint64_t rejected = rejected_ + (reader_ ? reader_->rejected() : 0);
    return fmt::format(" nic:{},{},mtu:{} nic_length_dropped={} nic_placed={}", interface_.name, rx_mode_, mtu_,
                       rejected, reader_ ? reader_->placed() : 0);
  }

  // Only the ring's frames wait for their kick; gathered frames leave at once, sealed.
  TransmitHooks* transmit_hooks() override { return gather_ ? nullptr : this; }
  void set_transmit_hook(TransmitHook hook) override { transmit_hook_ = std::move(hook); }

 private:
  static constexpr std::size_t kKickBatch = 64;  // frames queued before a kick is forced
  bool reported_down_ = false;

  // On lo every MAC is zero: the source MAC of our frames says the sending pid instead
  // (02:00 and the pid, big-endian; a locally administered address), so a receiver that
  // places a frame's payload before reading its authenticated header can name the sender
  // it expects (the layer above drops the frame if the claim is false). Elsewhere a MAC
  // names the pid when only one process of the job has it.
  void learn_senders() {
    const auto own = static_cast<std::uint32_t>(config_.pid);
    if (nic::is_loopback(interface_)) {
      for (nic::EthernetHeader& header : headers_) {
        header[6] = std::byte{0x02};
        header[7] = std::byte{0x00};
        for (int i = 0; i < 4; ++i) header[8 + i] = static_cast<std::byte>(own >> (24 - 8 * i));
      }
      return;
    }
    for (std::size_t pid = 0; pid < headers_.size(); ++pid) {
      nic::MacAddress mac;
      std::memcpy(mac.data(), headers_[pid].data(), 6);
      auto same = std::find_if(unique_macs_.begin(), unique_macs_.end(),
                               [&](const auto& known) { return known.first == mac; });
      if (same == unique_macs_.end()) {
        unique_macs_.emplace_back(mac, static_cast<int>(pid));
      } else {
        same->second = -1;  // shared by several processes: says nothing
      }
    }
  }

  // The pid a received frame's Ethernet header claims as its sender, or -1.
  int claimed_sender(std::span<const std::byte> ethernet) const {
    if (ethernet.size() < kEthernetHeader) return -1;
    const auto byte = [&](std::size_t i) { return std::to_integer<std::uint32_t>(ethernet[i]); };
    if (nic::is_loopback(interface_)) {
      if (byte(6) != 0x02 || byte(7) != 0x00) return -1;
      const std::uint32_t pid = byte(8) << 24 | byte(9) << 16 | byte(10) << 8 | byte(11);
      return pid < headers_.size() && pid != static_cast<std::uint32_t>(config_.pid) ? static_cast<int>(pid) : -1;
    }
    for (const auto& [mac, pid] : unique_macs_) {
      if (std::memcmp(ethernet.data() + 6, mac.data(), 6) == 0) return pid == config_.pid ? -1 : pid;
    }
    return -1;
  }

  // Hands each queued frame (past its Ethernet header) to the layer above at kick time.
  std::function<void(int, std::span<std::byte>)> hook() {
    if (!transmit_hook_) return {};
    return [this](int peer, std::span<std::byte> ethernet_frame) {
      transmit_hook_(peer, ethernet_frame.subspan(kEthernetHeader));
    };
  }

  TransportConfig config_;
  TransmitHook transmit_hook_;
  nic::Interface interface_;
  std::size_t mtu_ = kDefaultMtu;
  int segment_check_ms_ = kDefaultSegmentCheckMs;
  FileDescriptor fd_;
  std::vector<nic::EthernetHeader> headers_;                  // of a frame to each pid, once the peers are known
  std::unique_ptr<nic::PacketRings> rings_;                   // rx v2 (and the transmit ring, tx=ring)
  std::unique_ptr<nic::BlockRing> blocks_;                    // rx v3
  std::unique_ptr<nic::GatherSender> sender_;                 // tx=send, once the peers are known
  std::unique_ptr<nic::SocketReader> reader_;                 // rx recv
  std::vector<std::pair<nic::MacAddress, int>> unique_macs_;  // off lo: MAC -> its only pid (-1: shared)
  std::uint64_t rejected_ = 0;                                // ring frames dropped for their length
  std::string rx_mode_;
  bool gather_ = false;
  int send_error_ = 0;
  std::size_t unkicked_ = 0;
};

const TransportRegistration kRegistration{"nic", make_nic_transport, nic_options()};

}  // namespace

std::unique_ptr<Transport> make_nic_transport(const TransportConfig& config) {
  return std::make_unique<NicTransport>(config);
}

std::string nic_stats(const Transport& transport) {
  for (const Transport* layer = &transport; layer != nullptr; layer = layer->wrapped()) {
    if (const auto* nic = dynamic_cast<const NicTransport*>(layer)) return nic->stats();
  }
  return {};
}

}  // namespace bsp::transport
