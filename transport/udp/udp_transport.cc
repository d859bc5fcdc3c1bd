// transport/udp/udp_transport.cc: datagram socket transport (see udp_transport.h).
// Peers are known by address after connect(); an arriving datagram's source address
// names its pid (-1 when it is nobody of this job: the layer above counts and drops it).
// Consecutive equal-size frames to one peer leave in one sendmsg with UDP_SEGMENT (GSO),
// gathered from where they lie; with UDP_GRO the kernel hands several datagrams in one
// buffer, cut back into frames by transport/udp/datagram_batching.h. Memory per process
// does not grow with p: the receive slots cost pages only once datagrams land in them,
// and the kernel receive buffer shrinks beyond 64 processes (the job's buffers on a host
// stay within 1 GiB).
#include "transport/udp/udp_transport.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

#include "transport/file_descriptor.h"
#include "transport/option_spec.h"
#include "transport/registry.h"
#include "transport/room_layout.h"
#include "transport/send_errors.h"
#include "transport/shared_options.h"
#include "transport/socket_buffers.h"
#include "transport/udp/datagram_batching.h"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif
#ifndef SOL_UDP
#define SOL_UDP 17
#endif

namespace bsp::transport {
namespace {

using udp::gso_run;
using udp::split_coalesced;
using PlacedFrame = FrameSink::PlacedFrame;

constexpr std::size_t kDefaultMtu = 1472;   // 1500-byte Ethernet MTU - IP(20) - UDP(8)
constexpr std::size_t kLoopbackMtu = 8192;  // on lo: measured faster (FT W p=4 1.3-1.4x, IS A 1.2x)
// On lo in a small job (the bulk pool's, kBulkPoolProcesses): one frame per datagram as
// large as UDP allows, a datagram read straight into place by one recvmsg (measured
// 20-25% less CPU for an 8 MiB put than 7 frames of 8 KiB in one GSO send).
constexpr std::size_t kLoopbackBulkMtu = 65507;
constexpr std::size_t kLargestMtu = 65507;  // largest UDP payload over IPv4
constexpr int kDefaultSocketBuffer = 4 * 1024 * 1024;
// Receive side: what every peer may have in flight to us (half the reliable layer's pool
// of 8 KiB frames on loopback, 4 MiB) with room for the kernel's per-datagram overhead.
constexpr int kDefaultReceiveBuffer = 16 * 1024 * 1024;
// Beyond 64 processes the default shrinks so that the job's receive buffers on one host
// stay within this (the reliable layer's pools shrink with p too; recovery/buffer_pool.h),
// down to kSmallestReceiveBuffer: 4 MiB holds two 8 KiB frames in flight from each of 255 peers.
constexpr long long kHostReceiveBytes = 1LL << 30;
constexpr int kSmallestReceiveBuffer = 4 * 1024 * 1024;

int default_receive_buffer(int nprocs) {
  long long share = kHostReceiveBytes / std::max(nprocs, 1);
  return static_cast<int>(std::clamp<long long>(share, kSmallestReceiveBuffer, kDefaultReceiveBuffer));
}
constexpr std::size_t kBatch = 64;  // datagrams per sendmmsg/recvmmsg
// Frames one sendmmsg call may carry when runs of them are segmented (GSO).
constexpr std::size_t kFramesPerCall = 1024;
// A receive buffer with UDP_GRO on: the largest UDP payload plus one byte (a longer
// datagram shows as truncated).
constexpr std::size_t kCoalescedBuffer = 65536;
// Coalesced buffers read per recvmmsg (1 MiB at most): their frames are checked while
// still in the cache (against 64 of them, 4 MiB: an 8 MiB put 0-5% faster, near the noise).
constexpr std::size_t kCoalescedPerCall = 16;
// The reliable layer's pool on loopback up to kBulkPoolProcesses processes (a host's pools
// then stay within 384 MiB of address space, resident only where frames were): at p = 2 a
// link window of 12 MiB, below the 16 MiB receive buffer, so a bulk transfer never waits
// for acks and the kernel never drops for want of buffer.
constexpr std::size_t kBulkPoolBytes = 24u << 20;
constexpr int kBulkPoolProcesses = 16;
// Datagrams per recvmmsg for a sink that places (until it asks for placement).
constexpr std::size_t kPlacingPerCall = 4;
// Most frames one placed read scatters (datagram placement: kLargestMtu / mtu of them;
// the kernel coalesces at most 64 segments).
constexpr std::size_t kMaxPlacedFrames = 64;
// Datagrams one placed recvmmsg reads where the kernel does not coalesce, a frame each.
constexpr std::size_t kPlacedDatagramsPerCall = 16;
static_assert(kPlacedDatagramsPerCall <= kMaxPlacedFrames && kPlacedDatagramsPerCall <= kBatch);
// The shortest frame the transport carries (the layer above refuses frames shorter than
// its header itself: the transport passes on any length from 1 byte).
constexpr std::size_t kSmallestFrame = 1;

std::runtime_error system_error(const std::string& what) {
  return std::runtime_error(fmt::format("udp transport: {}: {}", what, std::strerror(errno)));
}

std::uint64_t address_key(const sockaddr_in& address) {
  return (static_cast<std::uint64_t>(address.sin_addr.s_addr) << 16) | address.sin_port;
}

sockaddr_in parse_address(const std::string& text) {
  auto colon = text.rfind(':');
  sockaddr_in address{};
  address.sin_family = AF_INET;
  if (colon == std::string::npos || ::inet_pton(AF_INET, text.substr(0, colon).c_str(), &address.sin_addr) != 1) {
    throw std::runtime_error(fmt::format("udp transport: bad peer address '{}' (want ip:port)", text));
  }
  int port = std::stoi(text.substr(colon + 1));
  if (port <= 0 || port > 65535) throw std::runtime_error(fmt::format("udp transport: bad port in '{}'", text));
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  return address;
}

// "20us", "1ms", "500ns", "20" (microseconds) -> nanoseconds.
std::chrono::nanoseconds parse_pace(const std::string& text) {
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  std::string unit = text.substr(used);
  double scale = unit.empty() || unit == "us" ? 1e3 : unit == "ns" ? 1.0 : unit == "ms" ? 1e6 : -1;
  if (used == 0 || scale < 0 || value < 0) {
    throw std::runtime_error(fmt::format("udp transport: bad pace '{}' (want e.g. 20us, 1ms, 500ns)", text));
  }
  return std::chrono::nanoseconds(static_cast<std::int64_t>(value * scale));
}

// What udp reads from TransportConfig::options (shown by bsprun --help, checked there).
const std::vector<TransportOption>& udp_options() {
  static const std::vector<TransportOption> options = {
      shared_options::host(),
      shared_options::mtu(),
      shared_options::rcvbuf(),
      shared_options::sndbuf(),
      text_option("pace", "", "minimum gap between datagrams udp sends, e.g. 20us"),
      number_option("udp-offload", "1",
                    "1: on loopback udp sends runs of equal frames to one peer in one system call "
                    "(UDP_SEGMENT), and takes arrivals the kernel coalesced (UDP_GRO), where the kernel can; "
                    "0: one datagram per frame both ways (0 to 1)",
                    0, 1),
      internal_option("gso", "1: UDP_SEGMENT on every path; 0: never (default: on loopback)"),
      internal_option("gro", "1 or 0: UDP_GRO (default: udp-offload; off loopback only where gso is off)"),
      internal_option("recverr", "1 or 0: IP_RECVERR, queue drops reported (default: off loopback)"),
  };
  return options;
}

class UdpTransport final : public Transport {
 public:
  explicit UdpTransport(const TransportConfig& config) : config_(config) {
    TransportOptions options("udp", config.options, udp_options());
    const std::string host = options.text("host", "127.0.0.1");
    try {
      // Fit to the path: an Ethernet payload, or larger frames when every peer is local.
      bool loopback = host.rfind("127.", 0) == 0;
      const std::size_t loopback_mtu = config.nprocs <= kBulkPoolProcesses ? kLoopbackBulkMtu : kLoopbackMtu;
      mtu_ = static_cast<std::size_t>(options.number("mtu", static_cast<long>(loopback ? loopback_mtu : kDefaultMtu)));
      rcvbuf_ = static_cast<int>(options.number("rcvbuf", default_receive_buffer(config.nprocs)));
      sndbuf_ = static_cast<int>(options.number("sndbuf", kDefaultSocketBuffer));
    } catch (const std::runtime_error&) {
      throw std::runtime_error("udp transport: options mtu, rcvbuf and sndbuf must be numbers");
    }
    pace_ = parse_pace(options.text("pace", "0"));
    const std::string offload = options.text("udp-offload", "1");
    const bool loopback = host.rfind("127.", 0) == 0;
    loopback_ = loopback;
    // Segmentation on loopback; between hosts only when asked (gso=1). Between two hosts of
    // the namespace cluster a segmented send crosses veth and bridge as one packet
    // (1472-byte frames: 1.0 GB/s against 0.10 one datagram per send; bench/udp_stream_floor
    // --netns), but over the shaped cluster (tbf host queues, which cut a segmented send and
    // drop pieces in silence) a many-to-one link stopped for the 30 s link timeout, with
    // and without coalescing: a resend of a few frames reached the emulated switch's port
    // as one packet, which its nearly full byte queue dropped whole every time
    // (docs/tuning.md).
    const std::string gso_option = options.text("gso", "");
    gso_ = gso_option.empty() ? offload != "0" && loopback : gso_option != "0";
    // Coalescing on receipt, but not off loopback where the peers segment: the two together
    // stopped the shaped many-to-one link in 2 of 3 runs.
    const std::string gro_option = options.text("gro", "");
    gro_ = gro_option.empty() ? offload != "0" && (loopback || !gso_) : gro_option != "0";
    if (!gso_) gso_state_ = "off";
    if (!gro_) gro_state_ = "off";
    // Off loopback, the kernel says when the interface's queue dropped a datagram (ENOBUFS
    // from sendmsg, treated as busy): without it a shaped link's full queue drops frames
    // in silence and the resends of resends fill it again (docs/tuning.md).
    report_queue_drops_ = options.text("recverr", loopback ? "0" : "1") != "0";
    if (mtu_ < 64 || mtu_ > kLargestMtu) {
      throw std::runtime_error(fmt::format("udp transport: mtu {} outside 64..{}", mtu_, kLargestMtu));
    }
    fd_.reset(::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd_) throw system_error("socket");
    size_socket_buffer(fd_.get(), SO_RCVBUF, SO_RCVBUFFORCE, rcvbuf_);
    size_socket_buffer(fd_.get(), SO_SNDBUF, SO_SNDBUFFORCE, sndbuf_);
    sockaddr_in local = parse_address(host + ":1");
    local.sin_port = 0;
    if (::bind(fd_.get(), reinterpret_cast<sockaddr*>(&local), sizeof local) != 0) throw system_error("bind " + host);
    // Segmentation offload where the kernel has it (Linux 4.18 / 5.0); without, one
    // datagram per frame as before.
    int zero = 0, one = 1;
    if (gso_ && ::setsockopt(fd_.get(), SOL_UDP, UDP_SEGMENT, &zero, sizeof zero) != 0) {
      gso_ = false;
      gso_state_ = fmt::format("unavailable({})", errno_name(errno));
    }
    if (gro_ && ::setsockopt(fd_.get(), SOL_UDP, UDP_GRO, &one, sizeof one) != 0) {
      gro_ = false;
      gro_state_ = fmt::format("unavailable({})", errno_name(errno));
    }
    if (report_queue_drops_ && ::setsockopt(fd_.get(), IPPROTO_IP, IP_RECVERR, &one, sizeof one) != 0) {
      report_queue_drops_ = false;
    }
    // Receive buffers one byte longer than the largest datagram: a longer one shows as
    // truncated (and is cut to mtu + 1 bytes for the layer above, which drops it).
    slot_size_ = gro_ ? kCoalescedBuffer : mtu_ + 1;
    // Not zero-filled: a slot's pages become resident only once a datagram lands there.
    storage_ = std::make_unique_for_overwrite<std::byte[]>(kBatch * slot_size_);
    for (std::size_t i = 0; i < kBatch; ++i) {
      receive_iov_[i] = iovec{storage_.get() + i * slot_size_, slot_size_};
    }
  }

  std::string_view name() const override { return "udp"; }
  Capabilities capabilities() const override {
    Capabilities capabilities{mtu_, false};
    // On loopback a small job's pool holds a bulk transfer in flight: the reliable layer's
    // default (8 MiB, half of it for sends) held an 8 MiB put to 4 MiB unacknowledged, so
    // the sender stalled on acks and copied half of it twice (docs/tuning.md).
    if (loopback_ && config_.nprocs <= kBulkPoolProcesses) capabilities.pool_frames = kBulkPoolBytes / mtu_;
    return capabilities;
  }

  std::string local_address() override {
    sockaddr_in local{};
    socklen_t size = sizeof local;
    if (::getsockname(fd_.get(), reinterpret_cast<sockaddr*>(&local), &size) != 0) throw system_error("getsockname");
    char ip[INET_ADDRSTRLEN];
    ::inet_ntop(AF_INET, &local.sin_addr, ip, sizeof ip);
    return fmt::format("{}:{}", ip, ntohs(local.sin_port));
  }

  void connect(const std::vector<std::string>& addresses) override {
    // The job may be smaller than the processes started (bsp_begin asked for fewer).
    if (addresses.empty() || addresses.size() > static_cast<std::size_t>(config_.nprocs) ||
        static_cast<std::size_t>(config_.pid) >= addresses.size()) {
      throw std::runtime_error(fmt::format("udp transport: {} addresses for a job of at most {} processes (pid {})",
                                           addresses.size(), config_.nprocs, config_.pid));
    }
    config_.nprocs = static_cast<int>(addresses.size());
    peers_.clear();
    pids_.clear();
    for (std::size_t pid = 0; pid < addresses.size(); ++pid) {
      peers_.push_back(parse_address(addresses[pid]));
      pids_[address_key(peers_.back())] = static_cast<int>(pid);
    }
  }

  SendStatus send(int peer, std::span<const std::byte> frame) override {
    OutFrame one{peer, frame};
    return send_batch(std::span(&one, 1)) == 1 ? SendStatus::sent : SendStatus::busy;
  }

  std::size_t send_batch(std::span<const OutFrame> frames) override {
    std::size_t done = 0;
    while (done < frames.size()) {
      std::size_t messages = 0;
      std::size_t framed = 0;  // frames in those messages
      if (pace_.count() > 0) {
        // Throttled (UDP-2): one datagram per gap; the caller retries when refused.
        auto now = std::chrono::steady_clock::now();
        if (now < next_send_) break;
        next_send_ = std::max(next_send_, now) + pace_;  // the earliest time of the next one
        add_message(frames.subspan(done, 1), 0, 0, false);
        messages = framed = 1;
      } else {
        while (messages < kBatch && done + framed < frames.size()) {
          auto rest = frames.subspan(done + framed);
          std::size_t run = gso_ ? std::min(gso_run(rest), kFramesPerCall - framed) : 1;
          if (run == 0) break;
          add_message(rest.first(run), messages, framed, gso_ && run > 1);
          framed += run;
          ++messages;
        }
      }
      int sent = ::sendmmsg(fd_.get(), send_headers_, static_cast<unsigned>(messages), 0);
      if (sent < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS) break;  // busy: retry later
        if (frames_in_message_[0] > 1 && (errno == EIO || errno == EINVAL || errno == EOPNOTSUPP)) {
          // The path cannot segment (no checksum offload): one datagram per frame.
          stop_gso(fmt::format("unavailable({})", errno_name(errno)));
          continue;
        }
        // This datagram cannot go. Transient (peer briefly unreachable): it is lost and
        // recovery resends it. Permanent: the peer is unreachable, say so (once).
        int peer = frames[done].peer;
        if (permanent_send_error(errno) && !lost_.count(peer)) lost_[peer] = std::strerror(errno);
        done += frames_in_message_[0];
        continue;
      }
      for (int i = 0; i < sent; ++i) {
        done += frames_in_message_[i];
        if (frames_in_message_[i] > 1) ++counters_.segmented_sends;
      }
      if (static_cast<std::size_t>(sent) < messages) break;  // the kernel took no more: busy
    }
    return done;
  }

  // With UDP_GRO one datagram may hold several frames: every frame of the datagrams taken
  // is delivered, so a call may deliver more than max_frames (it takes at most max_frames
  // datagrams). Coalesced buffers are taken a few at a time and their frames delivered
  // before the next are read, while they are still in the cache.
  std::size_t receive(FrameSink& sink, std::size_t max_frames) override {
    for (auto& [peer, why] : lost_) {
      if (!why.empty()) sink.on_peer_lost(peer, "udp transport: sending failed: " + why);
      why.clear();
    }
    const std::size_t head = sink.placement_head();
    // Datagrams of this many frames of mtu_ bytes (GRO: the kernel's segments) are read
    // with their payloads straight where the sink says (transport.h: datagram placement).
    // Only in a small job (kBulkPoolProcesses): among many senders the sink's guess of the
    // next datagram's sender fails more often, and datagrams read one per system call and
    // smaller batches would cost the many small frames of a large job's supersteps.
    // Until the kernel has coalesced a datagram, one recvmmsg reads several datagrams of a
    // frame each into consecutive room: where the path never coalesces (veth between the
    // cluster's hosts), one recvmsg per datagram scattered over room for 44 frames cost
    // the receiver 5% of its samples importing 89 iovecs, and more entering the kernel.
    // The first coalesced datagram is copied (it does not fit one frame's room); from then
    // on each read takes one datagram scattered over its segments' room.
    const bool coalescing = gro_ && counters_.coalesced_datagrams > 0;
    const std::size_t placed_frames = head == 0 || head >= mtu_ || config_.nprocs > kBulkPoolProcesses ? 0
                                      : coalescing ? std::clamp<std::size_t>(kLargestMtu / mtu_, 1, kMaxPlacedFrames)
                                                   : kPlacedDatagramsPerCall;
    // Where the sink may place, fewer datagrams per batch: the sink learns a bulk transfer
    // has begun from its first frames, and what one batch read before that is copied.
    const std::size_t per_call = placed_frames > 0 ? kPlacingPerCall : gro_ ? kCoalescedPerCall : kBatch;
    std::size_t delivered = 0;
    while (delivered < max_frames) {
      if (placed_frames > 0) {
        FrameSink::DatagramRoom offer = sink.datagram_room(mtu_, placed_frames);
        if (!offer.room.empty()) {
          std::size_t got = coalescing ? receive_placed(sink, offer.room, head, placed_frames)
                                       : receive_placed_datagrams(sink, offer.room, head, placed_frames);
          if (got == 0) break;  // nothing arrived: the socket is drained
          delivered += got;
          continue;
        }
      }
      std::size_t count = std::min(per_call, max_frames - delivered);
      std::size_t got = receive_some(count);
      if (got == 0) {
        if (report_queue_drops_) discard_error_queue();
        break;
      }
      for (std::size_t i = 0; i < got; ++i) {
        // A datagram from an address that is no process of this job: say so, the layer
        // above counts and drops it.
        const int pid = pid_of(sources_[i]);
        std::size_t length = std::min<std::size_t>(receive_headers_[i].msg_len, slot_size_);
        std::span<const std::byte> buffer(static_cast<const std::byte*>(receive_iov_[i].iov_base), length);
        delivered += deliver_coalesced(sink, pid, buffer,
                                       gro_ ? coalesced_segment_size(receive_headers_[i].msg_hdr) : 0);
      }
      if (got < count) break;  // the socket is drained
    }
    return delivered;
  }

  bool flush() override { return true; }  // sendmmsg hands every frame to the kernel
  int wait_fd() const override { return fd_.get(); }

  // For --stats: what offload this socket got and what it did.
  std::string stats() const {
    // The settings in one word without '=' (bsprun sums the key=value counters).
    return fmt::format(" udp:mtu-{},gso-{},gro-{} udp_segmented_sends={} udp_coalesced={} udp_bad_coalesced={}", mtu_,
                       gso_state_, gro_state_, counters_.segmented_sends, counters_.coalesced_datagrams,
                       counters_.bad_coalesced);
  }

 private:
  // Hands the frames of a received buffer to the sink: one datagram, or the segments the
  // kernel coalesced (UDP_GRO). A buffer whose segment size could not have come from the
  // kernel's coalescing of our frames (datagram_batching.h) is counted and dropped whole.
  std::size_t deliver_coalesced(FrameSink& sink, int pid, std::span<const std::byte> buffer, std::size_t segment) {
    if (segment != 0 && segment < buffer.size()) {
      if (!udp::coalesced_shape_ok(buffer.size(), segment, kSmallestFrame, mtu_)) {
        ++counters_.bad_coalesced;
        return 0;
      }
      ++counters_.coalesced_datagrams;
    }
    return split_coalesced(buffer, segment, mtu_ + 1,
                           [&](std::span<const std::byte> frame) { sink.on_frame(pid, frame); });
  }

  void stop_gso(std::string why) {
    gso_ = false;
    gso_state_ = std::move(why);
  }

  static std::string errno_name(int error) {
    const char* name = ::strerrorname_np(error);
    return name != nullptr ? name : std::to_string(error);
  }

  // Fills send message `index` with a run of frames to one peer starting at iovec
  // `first_iov`; segmented: the kernel cuts it into datagrams of the first frame's size.
  void add_message(std::span<const OutFrame> run, std::size_t index, std::size_t first_iov, bool segmented) {
    for (std::size_t k = 0; k < run.size(); ++k) {
      send_iov_[first_iov + k] = iovec{const_cast<std::byte*>(run[k].bytes.data()), run[k].bytes.size()};
    }
    mmsghdr& header = send_headers_[index];
    header = mmsghdr{};
    header.msg_hdr.msg_name = &peers_.at(static_cast<std::size_t>(run[0].peer));
    header.msg_hdr.msg_namelen = sizeof(sockaddr_in);
    header.msg_hdr.msg_iov = &send_iov_[first_iov];
    header.msg_hdr.msg_iovlen = run.size();
    frames_in_message_[index] = run.size();
    if (!segmented) return;
    header.msg_hdr.msg_control = send_control_[index];
    header.msg_hdr.msg_controllen = sizeof send_control_[index];
    cmsghdr* control = CMSG_FIRSTHDR(&header.msg_hdr);
    control->cmsg_level = SOL_UDP;
    control->cmsg_type = UDP_SEGMENT;
    control->cmsg_len = CMSG_LEN(sizeof(std::uint16_t));
    auto segment = static_cast<std::uint16_t>(run[0].bytes.size());
    std::memcpy(CMSG_DATA(control), &segment, sizeof segment);
  }

  // Reads one datagram scattered for placement: frame i's first `head` bytes into heads_,
  // the rest at room + i × (mtu_ - head), and whatever lies beyond into slot 0 (so the
  // buffer is as long as an ordinary slot, and a longer datagram shows as truncated the
  // same way). A datagram of that shape (its segments mtu_ long, or one frame) goes to the
  // sink as placed frames; any other (shorter segments, truncated) is given back to the
  // sink as no placement and delivered by on_frame from a contiguous copy in slot 1.
  // Returns the frames delivered (0: nothing to read; the room is given up).
  std::size_t receive_placed(FrameSink& sink, std::span<std::byte> room, std::size_t head, std::size_t frames) {
    if (heads_.size() < frames * head) heads_.resize(frames * head);
    const RoomLayout layout{heads_.data(), head, room, mtu_ - head};
    std::size_t pieces = 0;
    for (std::size_t i = 0; i < frames; ++i) {
      placed_iov_[pieces++] = layout.head_piece(i);
      placed_iov_[pieces++] = layout.body_piece(i);
    }
    const std::size_t scattered = frames * mtu_;
    placed_iov_[pieces++] = iovec{storage_.get(), slot_size_ > scattered ? slot_size_ - scattered : 0};
    msghdr message{};
    sockaddr_in source{};
    message.msg_name = &source;
    message.msg_namelen = sizeof source;
    message.msg_iov = placed_iov_;
    message.msg_iovlen = pieces;
    if (gro_) {
      message.msg_control = receive_control_[0];
      message.msg_controllen = sizeof receive_control_[0];
    }
    ssize_t got;
    do {
      got = ::recvmsg(fd_.get(), &message, MSG_DONTWAIT);
    } while (got < 0 && errno == EINTR);
    if (got < 0) {
      sink.on_datagram_placed(kNotAMember, {});
      return 0;
    }
    const int pid = pid_of(source);
    const std::size_t length = static_cast<std::size_t>(got);
    const std::size_t segment = gro_ ? coalesced_segment_size(message) : 0;
    const bool shaped = (message.msg_flags & MSG_TRUNC) == 0 && length <= scattered &&
                        (segment == mtu_ || (length <= mtu_ && (segment == 0 || segment >= length)));
    if (shaped) {
      std::size_t count = 0;
      std::size_t offset = 0;
      do {
        placed_[count] = layout.placed(count, std::min(mtu_, length - offset));
        ++count;
        offset += mtu_;
      } while (offset < length);
      if (count > 1) ++counters_.coalesced_datagrams;
      sink.on_datagram_placed(pid, std::span<const PlacedFrame>(placed_, count));
      return count;
    }
    // Not the shape the room was made for: the pieces are put back together in slot 1.
    sink.on_datagram_placed(pid, {});
    std::byte* whole = storage_.get() + slot_size_;
    const std::size_t copied = gather(std::span<const iovec>(placed_iov_, pieces), length, whole);
    return deliver_coalesced(sink, pid, std::span<const std::byte>(whole, copied), segment);
  }

  // Reads up to `count` datagrams by one recvmmsg, datagram i scattered as frame i of the
  // room: its first `head` bytes into heads_, the next mtu_ - head at room + i × (mtu_ -
  // head), anything beyond into receive slot i (so each is read whole, as into a slot). The
  // leading datagrams that have a frame's shape and the first one's sender go to the sink
  // as placed frames; the others are copied out of the room first (the sink may write
  // there once it has the placed ones) and then delivered by on_frame.
  // Returns the frames delivered (0: nothing to read; the room is given up).
  std::size_t receive_placed_datagrams(FrameSink& sink, std::span<std::byte> room, std::size_t head,
                                       std::size_t count) {
    if (heads_.size() < count * head) heads_.resize(count * head);
    const RoomLayout layout{heads_.data(), head, room, mtu_ - head};
    for (std::size_t i = 0; i < count; ++i) {
      iovec* pieces = &placed_iov_[3 * i];
      pieces[0] = layout.head_piece(i);
      pieces[1] = layout.body_piece(i);
      pieces[2] = iovec{storage_.get() + i * slot_size_, slot_size_ - mtu_};
      receive_headers_[i] = mmsghdr{};
      msghdr& message = receive_headers_[i].msg_hdr;
      message.msg_name = &sources_[i];
      message.msg_namelen = sizeof(sockaddr_in);
      message.msg_iov = pieces;
      message.msg_iovlen = 3;
      if (gro_) {
        message.msg_control = receive_control_[i];
        message.msg_controllen = sizeof receive_control_[i];
      }
    }
    int got;
    do {
      got = ::recvmmsg(fd_.get(), receive_headers_, static_cast<unsigned>(count), MSG_DONTWAIT, nullptr);
    } while (got < 0 && errno == EINTR);
    if (got <= 0) {
      sink.on_datagram_placed(kNotAMember, {});
      return 0;
    }
    const auto arrived = static_cast<std::size_t>(got);
    const int from = pid_of(sources_[0]);
    std::size_t shaped = 0;
    for (; shaped < arrived; ++shaped) {
      msghdr& message = receive_headers_[shaped].msg_hdr;
      const std::size_t length = receive_headers_[shaped].msg_len;
      const std::size_t segment = gro_ ? coalesced_segment_size(message) : 0;
      if ((message.msg_flags & MSG_TRUNC) != 0 || length > mtu_ || (segment != 0 && segment < length) ||
          pid_of(sources_[shaped]) != from) {
        break;
      }
      placed_[shaped] = layout.placed(shaped, length);
    }
    unplaced_.clear();
    for (std::size_t i = shaped; i < arrived; ++i) {
      const std::size_t length = std::min<std::size_t>(receive_headers_[i].msg_len, slot_size_);
      const std::size_t at = unplaced_.size();
      unplaced_.resize(at + length);
      unplaced_.resize(at + gather(std::span<const iovec>(&placed_iov_[3 * i], 3), length, unplaced_.data() + at));
      unplaced_at_[i] = at;
    }
    sink.on_datagram_placed(from, std::span<const PlacedFrame>(placed_, shaped));
    std::size_t delivered = shaped;
    for (std::size_t i = shaped; i < arrived; ++i) {
      const std::size_t end = i + 1 < arrived ? unplaced_at_[i + 1] : unplaced_.size();
      delivered += deliver_coalesced(
          sink, pid_of(sources_[i]),
          std::span<const std::byte>(unplaced_).subspan(unplaced_at_[i], end - unplaced_at_[i]),
          gro_ ? coalesced_segment_size(receive_headers_[i].msg_hdr) : 0);
    }
    return delivered;
  }

  // The pid of the job's process at a datagram's source address, or kNotAMember.
  int pid_of(const sockaddr_in& source) const {
    auto found = pids_.find(address_key(source));
    return found == pids_.end() ? kNotAMember : found->second;
  }

  // Reads up to count datagrams into the receive buffers; returns how many came.
  std::size_t receive_some(std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) {
      receive_headers_[i] = mmsghdr{};
      receive_headers_[i].msg_hdr.msg_name = &sources_[i];
      receive_headers_[i].msg_hdr.msg_namelen = sizeof(sockaddr_in);
      receive_headers_[i].msg_hdr.msg_iov = &receive_iov_[i];
      receive_headers_[i].msg_hdr.msg_iovlen = 1;
      if (gro_) {
        receive_headers_[i].msg_hdr.msg_control = receive_control_[i];
        receive_headers_[i].msg_hdr.msg_controllen = sizeof receive_control_[i];
      }
    }
    int got;
    do {
      got = ::recvmmsg(fd_.get(), receive_headers_, static_cast<unsigned>(count), MSG_DONTWAIT, nullptr);
    } while (got < 0 && errno == EINTR);
    return got > 0 ? static_cast<std::size_t>(got) : 0;
  }

  // With IP_RECVERR, ICMP errors (a peer's port closed) wait on the socket's error queue,
  // which would keep poll() reporting POLLERR and hold receive memory: read them away
  // (the reliable layer finds a lost peer by its silence, not by ICMP).
  void discard_error_queue() {
    char data[256];
    alignas(cmsghdr) char control[256];
    for (int i = 0; i < 64; ++i) {
      iovec vector{data, sizeof data};
      msghdr message{};
      message.msg_iov = &vector;
      message.msg_iovlen = 1;
      message.msg_control = control;
      message.msg_controllen = sizeof control;
      if (::recvmsg(fd_.get(), &message, MSG_ERRQUEUE | MSG_DONTWAIT) < 0) return;
    }
  }

  // The UDP_GRO segment size the kernel attached to a received message (0: none).
  static std::size_t coalesced_segment_size(msghdr& message) {
    for (cmsghdr* control = CMSG_FIRSTHDR(&message); control != nullptr; control = CMSG_NXTHDR(&message, control)) {
      if (control->cmsg_level != SOL_UDP || control->cmsg_type != UDP_GRO) continue;
      if (control->cmsg_len < CMSG_LEN(sizeof(int))) return 0;
      int size = 0;
      std::memcpy(&size, CMSG_DATA(control), sizeof size);
      return size > 0 ? static_cast<std::size_t>(size) : 0;
    }
    return 0;
  }

  TransportConfig config_;
  std::size_t mtu_ = kDefaultMtu;
  int rcvbuf_ = kDefaultReceiveBuffer;
  int sndbuf_ = kDefaultSocketBuffer;
  FileDescriptor fd_;
  std::chrono::nanoseconds pace_{0};
  bool gso_ = true;               // runs of frames leave as one segmented send (UDP_SEGMENT)
  std::string gso_state_ = "on";  // for --stats: on, off, unavailable(ERRNO)
  std::string gro_state_ = "on";
  struct {
    std::uint64_t segmented_sends = 0;      // messages of several frames the kernel segmented
    std::uint64_t coalesced_datagrams = 0;  // buffers of several frames the kernel coalesced
    std::uint64_t bad_coalesced = 0;        // coalesced buffers of an impossible shape, dropped
  } counters_;
  bool gro_ = true;                  // the kernel may coalesce arriving datagrams (UDP_GRO)
  bool report_queue_drops_ = false;  // IP_RECVERR: a full interface queue refuses (ENOBUFS)
  bool loopback_ = false;            // bound to 127.x: every peer on this host
  std::size_t slot_size_ = 0;        // bytes of one receive buffer
  std::chrono::steady_clock::time_point next_send_{};
  std::vector<sockaddr_in> peers_;
  std::unordered_map<std::uint64_t, int> pids_;
  std::map<int, std::string> lost_;  // peers a permanent send error cut off (text: not yet reported)
  std::unique_ptr<std::byte[]> storage_;
  iovec receive_iov_[kBatch];
  mmsghdr receive_headers_[kBatch];
  sockaddr_in sources_[kBatch];
  alignas(cmsghdr) char receive_control_[kBatch][CMSG_SPACE(sizeof(int))];
  // Datagram placement: each frame's head, the scatter list, the frames handed on.
  std::vector<std::byte> heads_;
  iovec placed_iov_[std::max(2 * kMaxPlacedFrames + 1, 3 * kPlacedDatagramsPerCall)];
  FrameSink::PlacedFrame placed_[kMaxPlacedFrames];
  // Datagrams of a placed batch that were not placed: copied out of the room, datagram i
  // from unplaced_at_[i].
  std::vector<std::byte> unplaced_;
  std::size_t unplaced_at_[kPlacedDatagramsPerCall];
  iovec send_iov_[kFramesPerCall];
  mmsghdr send_headers_[kBatch];
  std::size_t frames_in_message_[kBatch];
  alignas(cmsghdr) char send_control_[kBatch][CMSG_SPACE(sizeof(std::uint16_t))];
};

TransportRegistration registration("udp", make_udp_transport, udp_options());

}  // namespace

std::unique_ptr<Transport> make_udp_transport(const TransportConfig& config) {
  return std::make_unique<UdpTransport>(config);
}

std::string udp_stats(const Transport& transport) {
  for (const Transport* layer = &transport; layer != nullptr; layer = layer->wrapped()) {
    if (const auto* udp = dynamic_cast<const UdpTransport*>(layer)) return udp->stats();
  }
  return {};
}

}  // namespace bsp::transport
