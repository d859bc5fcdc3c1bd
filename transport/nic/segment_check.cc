// transport/nic/segment_check.cc: the probe exchange proving one Ethernet segment.
#include "transport/nic/segment_check.h"

#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string_view>
#include <system_error>
#include <thread>

#include "transport/file_descriptor.h"
#include "transport/send_errors.h"
#include "transport/socket_buffers.h"

namespace bsp::transport::nic {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr std::size_t kMostListed = 8;  // pids described in a failure
constexpr int kMostPerWake = 4096;      // probes taken before the clock is looked at again

// Probe body, after the Ethernet header (little-endian):
//   0 u32 magic | 4 u32 job id | 8 u32 from | 12 u32 to | 16 u8 flags (bit 0: passed) |
//   17 u32 first | 21 u16 count | 23 heard bitmap, n = (count + 7) / 8 bytes |
//   23 + n reported bitmap, n bytes | 23 + 2n u64 MAC(all before)
constexpr std::uint32_t kMagic = 0x434E5350;  // "PSNC" on the wire
constexpr std::size_t kJobAt = 4, kFromAt = 8, kToAt = 12, kFlagsAt = 16, kFirstAt = 17, kCountAt = 21, kBitsAt = 23;
constexpr std::size_t kTagBytes = 8;
constexpr std::uint8_t kPassedFlag = 1;
constexpr std::string_view kPurpose = "bsplib nic segment probe v2";
constexpr MacAddress kBroadcastMac{0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

void put_u16(std::byte* at, std::uint16_t value) {
  for (int i = 0; i < 2; ++i) at[i] = static_cast<std::byte>(value >> (8 * i));
}
void put_u32(std::byte* at, std::uint32_t value) {
  for (int i = 0; i < 4; ++i) at[i] = static_cast<std::byte>(value >> (8 * i));
}
void put_u64(std::byte* at, std::uint64_t value) {
  for (int i = 0; i < 8; ++i) at[i] = static_cast<std::byte>(value >> (8 * i));
}
std::uint32_t get_u16(const std::byte* at) {
  return std::to_integer<std::uint32_t>(at[0]) | std::to_integer<std::uint32_t>(at[1]) << 8;
}
std::uint32_t get_u32(const std::byte* at) {
  std::uint32_t value = 0;
  for (int i = 0; i < 4; ++i) value |= std::to_integer<std::uint32_t>(at[i]) << (8 * i);
  return value;
}
std::uint64_t get_u64(const std::byte* at) {
  std::uint64_t value = 0;
  for (int i = 0; i < 8; ++i) value |= std::to_integer<std::uint64_t>(at[i]) << (8 * i);
  return value;
}

std::uint64_t probe_tag(const auth::Key& secret, const std::byte* body, std::size_t size) {
  return auth::mac(
      secret, {std::as_bytes(std::span(kPurpose.data(), kPurpose.size())), std::span<const std::byte>(body, size)});
}

bool same_mac(const std::byte* at, const MacAddress& mac) { return std::memcmp(at, mac.data(), mac.size()) == 0; }

std::string describe_pids(const std::vector<int>& pids, const std::vector<NicAddress>& addresses) {
  std::vector<std::string> described;
  for (std::size_t i = 0; i < pids.size() && i < kMostListed; ++i) {
    described.push_back(addresses[static_cast<std::size_t>(pids[i])].describe(pids[i]));
  }
  if (pids.size() > kMostListed) described.push_back(fmt::format("and {} more", pids.size() - kMostListed));
  return fmt::format("{}", fmt::join(described, ", "));
}

// Closing a packet socket waits for an RCU grace period (the kernel's synchronize_net in
// packet_release: 6-16 ms measured on a 2-vCPU VM), which would be nearly all of this
// check's cost at start-up: a short-lived thread waits for it instead.
void close_in_background(FileDescriptor fd) {
  try {
    std::thread([fd = std::move(fd)]() mutable { fd.reset(); }).detach();
  } catch (const std::system_error&) {
    // No thread: the descriptor closed here, with the lambda that held it.
  }
}

// The pacing of a job of p processes. Every broadcast reaches every process's socket, so
// answers and sending again (in case a probe was lost) are spaced more widely the larger
// the job: answers gathered for 5 ms (p² µs beyond 70 processes, at most 100 ms); the
// first resend after 10 ms (p/2 ms beyond 20 processes), then twice as long each time
// up to p² × 10 µs (at least 40 ms, at most 1 s).
struct Pacing {
  explicit Pacing(std::size_t p) {
    using std::chrono::microseconds;
    answer_gap = std::clamp<Clock::duration>(microseconds(p * p), 5ms, 100ms);
    first_resend = std::clamp<Clock::duration>(microseconds(500 * p), 10ms, 200ms);
    longest_resend = std::clamp<Clock::duration>(microseconds(10 * p * p), 40ms, 1000ms);
    // After passing, answering a peer's resend at most this long.
    linger = std::max<Clock::duration>(100ms, 2 * longest_resend);
    // As many peers owed as this, and one broadcast is cheaper than a probe to each.
    broadcast_from = std::max<std::size_t>(4, p / 8);
  }
  Clock::duration answer_gap, first_resend, longest_resend, linger;
  std::size_t broadcast_from;
};

// A bitmap of p bits.
class PidSet {
 public:
  explicit PidSet(std::size_t p) : bits_((p + 7) / 8) {}
  bool has(std::uint32_t pid) const { return (bits_[pid / 8] >> (pid % 8)) & 1; }
  void add(std::uint32_t pid) { bits_[pid / 8] |= static_cast<std::uint8_t>(1u << (pid % 8)); }
  // Bits first .. first + count - 1 as a probe's bitmap.
  std::vector<std::uint8_t> range(std::uint32_t first, std::uint32_t count) const {
    std::vector<std::uint8_t> out((count + 7) / 8, 0);
    for (std::uint32_t k = 0; k < count; ++k) {
      if (has(first + k)) out[k / 8] |= static_cast<std::uint8_t>(1u << (k % 8));
    }
    return out;
  }

 private:
  std::vector<std::uint8_t> bits_;
};

// What this process knows of each peer and has told it; sends and answers probes.
class ProbeExchange {
 public:
  ProbeExchange(const SegmentCheck& check, int fd)
      : check_(check),
        fd_(fd),
        pacing_(check.addresses.size()),
        peers_(check.addresses.size()),
        heard_(check.addresses.size()),
        reported_(check.addresses.size()) {
    std::size_t mtu = check.interface.mtu > 0 ? static_cast<std::size_t>(check.interface.mtu) : 1500;
    std::size_t room = mtu > kBitsAt + kTagBytes + 2 ? (mtu - kBitsAt - kTagBytes) / 2 : 1;
    chunk_bits_ = static_cast<std::uint32_t>(std::clamp<std::size_t>(room * 8, 8, kMostProbeBits));
    resend_gap_ = pacing_.first_resend;
  }

  // The first broadcast: here I am (having heard nobody yet).
  void start(Clock::time_point now) {
    broadcast();
    next_resend_ = now + resend_gap_;
  }

  // Takes the probes that have arrived (a bounded number: a flood must not hold off the
  // deadline). Answers are owed, not sent: step() sends them gathered.
  void receive_all() {
    alignas(8) std::byte buffer[2048];
    for (int taken = 0; taken < kMostPerWake; ++taken) {
      ssize_t got = ::recv(fd_, buffer, sizeof buffer, MSG_DONTWAIT);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) return;  // EAGAIN: nothing more now
      std::optional<Probe> probe = decode_probe(std::span(buffer, static_cast<std::size_t>(got)), check_.job_id,
                                                check_.pid, check_.addresses, check_.secret);
      if (probe) take(*probe);
    }
  }

  // Sends what is due: a broadcast when this process has just heard everyone or passed,
  // the answers owed (one gathering per answer gap), and probes to the peers still
  // missing (paced).
  void step(Clock::time_point now) {
    bool complete = heard_count_ == others();
    if ((complete && !complete_sent_) || (passed() && !passed_sent_)) {
      complete_sent_ = complete;
      passed_sent_ = passed();
      broadcast();
    }
    bool resend = !passed() && now >= next_resend_;
    bool answer = owed_count_ > 0 && now >= last_answer_ + pacing_.answer_gap;
    if (!resend && !answer) return;
    std::vector<int> targets;
    for (int peer = 0; peer < static_cast<int>(peers_.size()); ++peer) {
      const Peer& state = peers_[static_cast<std::size_t>(peer)];
      if (peer == check_.pid) continue;
      if (state.owed || (resend && (!state.heard || !state.reported || !state.knows_heard))) targets.push_back(peer);
    }
    if (resend) {
      next_resend_ = now + resend_gap_;
      resend_gap_ = std::min(2 * resend_gap_, pacing_.longest_resend);
    }
    if (answer) last_answer_ = now;
    if (targets.size() >= pacing_.broadcast_from) {
      broadcast();
    } else {
      for (int peer : targets) unicast(peer);
    }
  }

  // When step() may have something to send next.
  Clock::time_point next_due() const {
    Clock::time_point due = passed() ? Clock::time_point::max() : next_resend_;
    if (owed_count_ > 0) due = std::min(due, last_answer_ + pacing_.answer_gap);
    return due;
  }

  // Every peer has heard us and we it.
  bool passed() const { return heard_count_ == others() && reported_count_ == others(); }
  // Every peer has said it passed: nobody needs us.
  bool quiet() const { return passed_count_ == others(); }
  Clock::duration linger() const { return pacing_.linger; }
  const SegmentCheckCounts& counts() const { return counts_; }

  // Peers heard plus peers that said they heard us: grows while the check moves.
  std::size_t progress() const { return heard_count_ + reported_count_; }

  std::string failure(std::chrono::milliseconds idle, std::chrono::milliseconds waited) const {
    std::vector<int> unheard, deaf;
    for (int peer = 0; peer < static_cast<int>(peers_.size()); ++peer) {
      if (peer == check_.pid) continue;
      if (!peers_[static_cast<std::size_t>(peer)].heard) unheard.push_back(peer);
      if (!peers_[static_cast<std::size_t>(peer)].reported) deaf.push_back(peer);
    }
    const NicAddress& self = check_.addresses[static_cast<std::size_t>(check_.pid)];
    std::string what;
    if (!unheard.empty()) what += fmt::format("it never heard from {}", describe_pids(unheard, check_.addresses));
    if (!deaf.empty()) {
      what += fmt::format("{}{} did not hear it", what.empty() ? "" : "; ",
                          deaf == unheard ? std::string(deaf.size() == 1 ? "that process" : "those processes")
                                          : describe_pids(deaf, check_.addresses));
    }
    return fmt::format(
        "nic transport: {} could not exchange raw Ethernet frames with every process (nothing new for {} ms, {} ms "
        "in all): {}. Their "
        "interfaces are not on one Ethernet segment{}. Give every process an interface on one Ethernet segment "
        "(--iface=NAME), or use --transport=udp or --transport=tcp; --connect-timeout-ms=MS sets how long this "
        "check waits. (A process that stopped before this check says why in its own error.)",
        self.describe(check_.pid), idle.count(), waited.count(), what, why_not());
  }

 private:
  struct Peer {
    bool heard = false;        // a probe of it arrived
    bool reported = false;     // it said it heard us
    bool knows_heard = false;  // its last probe said it knows we heard it
    bool passed = false;       // it said it passed
    bool owed = false;         // it lacks news from us: answer it
  };

  std::size_t others() const { return peers_.size() - 1; }

  // A hint for the case a user meets most: lo across namespaces or hosts.
  std::string why_not() const {
    const NicAddress& self = check_.addresses[static_cast<std::size_t>(check_.pid)];
    if (self.host_local()) {
      return fmt::format(": {} reaches only processes on one host and in one network namespace", self.interface);
    }
    return "";
  }

  void take(const Probe& probe) {
    ++counts_.received;
    const auto me = static_cast<std::uint32_t>(check_.pid);
    Peer& peer = peers_[probe.from];
    if (!peer.heard) {
      peer.heard = true;
      heard_.add(probe.from);
      ++heard_count_;
    }
    if ((probe.passed || probe.heard(me)) && !peer.reported) {
      peer.reported = true;
      reported_.add(probe.from);
      ++reported_count_;
    }
    if (probe.passed && !peer.passed) {
      peer.passed = true;
      ++passed_count_;
    }
    if (!probe.covers(me) && !probe.passed) return;  // a range of a large job's broadcast without us
    peer.knows_heard = probe.passed || probe.reported(me);
    // Answer when it has not heard us, or does not know we heard it: every answer says
    // we heard it, and its next probe says it heard us, so this ends.
    if (!peer.reported || !peer.knows_heard) owe(static_cast<int>(probe.from));
  }

  void owe(int peer) {
    Peer& state = peers_[static_cast<std::size_t>(peer)];
    if (!state.owed) {
      state.owed = true;
      ++owed_count_;
    }
  }
  void settle(int peer) {
    Peer& state = peers_[static_cast<std::size_t>(peer)];
    if (state.owed) {
      state.owed = false;
      --owed_count_;
    }
  }

  // This process's bitmaps in ranges of chunk_bits_, to everyone.
  void broadcast() {
    const auto p = static_cast<std::uint32_t>(peers_.size());
    for (std::uint32_t first = 0; first < p; first += chunk_bits_) {
      if (send_range(kEveryone, first, std::min(chunk_bits_, p - first))) ++counts_.broadcasts;
    }
    for (int peer = 0; peer < static_cast<int>(p); ++peer) {
      if (peer != check_.pid) settle(peer);
    }
  }

  // The range of the bitmaps that holds peer's bit, to peer.
  void unicast(int peer) {
    const auto p = static_cast<std::uint32_t>(peers_.size());
    std::uint32_t first = static_cast<std::uint32_t>(peer) / chunk_bits_ * chunk_bits_;
    if (send_range(static_cast<std::uint32_t>(peer), first, std::min(chunk_bits_, p - first))) {
      ++counts_.unicasts;
      settle(peer);
    }
  }

  bool send_range(std::uint32_t to, std::uint32_t first, std::uint32_t count) {
    Probe probe;
    probe.job_id = check_.job_id;
    probe.from = static_cast<std::uint32_t>(check_.pid);
    probe.to = to;
    probe.passed = passed();
    probe.first = first;
    probe.count = count;
    probe.heard_bits = heard_.range(first, count);
    probe.reported_bits = reported_.range(first, count);
    const MacAddress& destination = to == kEveryone ? kBroadcastMac : check_.addresses[to].mac;
    std::vector<std::byte> frame = encode_probe(probe, destination, check_.interface.mac, check_.secret);
    ssize_t sent;
    do sent = ::send(fd_, frame.data(), frame.size(), MSG_DONTWAIT);
    while (sent < 0 && errno == EINTR);
    if (sent < 0 && permanent_send_error(errno)) {
      throw std::runtime_error(
          fmt::format("nic transport: sending on {} failed: {}", check_.interface.name, std::strerror(errno)));
    }
    // A transient failure (no buffer) is a probe lost: sent again when resending.
    return sent >= 0;
  }

  const SegmentCheck& check_;
  int fd_;
  Pacing pacing_;
  std::vector<Peer> peers_;
  PidSet heard_, reported_;
  std::uint32_t chunk_bits_ = kMostProbeBits;
  std::size_t heard_count_ = 0, reported_count_ = 0, passed_count_ = 0, owed_count_ = 0;
  bool complete_sent_ = false, passed_sent_ = false;
  Clock::duration resend_gap_{};
  Clock::time_point next_resend_{}, last_answer_{};
  SegmentCheckCounts counts_;
};

}  // namespace

std::vector<std::byte> encode_probe(const Probe& probe, const MacAddress& destination, const MacAddress& source,
                                    const auth::Key& secret) {
  const std::size_t n = (probe.count + 7) / 8;
  std::vector<std::byte> frame(std::max<std::size_t>(60, kEthernetHeader + kBitsAt + 2 * n + kTagBytes));
  std::memcpy(frame.data(), destination.data(), 6);
  std::memcpy(frame.data() + 6, source.data(), 6);
  frame[12] = std::byte{kProbeEtherType >> 8};
  frame[13] = std::byte{kProbeEtherType & 0xFF};
  std::byte* body = frame.data() + kEthernetHeader;
  put_u32(body, kMagic);
  put_u32(body + kJobAt, probe.job_id);
  put_u32(body + kFromAt, probe.from);
  put_u32(body + kToAt, probe.to);
  body[kFlagsAt] = std::byte{probe.passed ? kPassedFlag : std::uint8_t{0}};
  put_u32(body + kFirstAt, probe.first);
  put_u16(body + kCountAt, static_cast<std::uint16_t>(probe.count));
  std::memcpy(body + kBitsAt, probe.heard_bits.data(), std::min(n, probe.heard_bits.size()));
  std::memcpy(body + kBitsAt + n, probe.reported_bits.data(), std::min(n, probe.reported_bits.size()));
  put_u64(body + kBitsAt + 2 * n, probe_tag(secret, body, kBitsAt + 2 * n));
  return frame;
}

std::optional<Probe> decode_probe(std::span<const std::byte> frame, std::uint32_t job_id, int to,
                                  const std::vector<NicAddress>& addresses, const auth::Key& secret) {
  if (to < 0 || frame.size() < kEthernetHeader + kBitsAt + kTagBytes) return std::nullopt;
  if (frame[12] != std::byte{kProbeEtherType >> 8} || frame[13] != std::byte{kProbeEtherType & 0xFF}) {
    return std::nullopt;
  }
  const std::byte* body = frame.data() + kEthernetHeader;
  Probe probe;
  probe.job_id = get_u32(body + kJobAt);
  probe.from = get_u32(body + kFromAt);
  probe.to = get_u32(body + kToAt);
  const std::uint8_t flags = std::to_integer<std::uint8_t>(body[kFlagsAt]);
  probe.passed = flags & kPassedFlag;
  probe.first = get_u32(body + kFirstAt);
  probe.count = get_u16(body + kCountAt);
  const auto self = static_cast<std::uint32_t>(to);
  if (get_u32(body) != kMagic || probe.job_id != job_id || (probe.to != self && probe.to != kEveryone) ||
      probe.from >= addresses.size() || probe.from == self || (flags & ~kPassedFlag) != 0 || probe.count == 0 ||
      probe.count > kMostProbeBits || std::uint64_t{probe.first} + probe.count > addresses.size()) {
    return std::nullopt;
  }
  const std::size_t n = (probe.count + 7) / 8;
  if (frame.size() < kEthernetHeader + kBitsAt + 2 * n + kTagBytes) return std::nullopt;
  if (!same_mac(frame.data() + 6, addresses[probe.from].mac)) return std::nullopt;
  if (!auth::same_tag(get_u64(body + kBitsAt + 2 * n), probe_tag(secret, body, kBitsAt + 2 * n))) {
    return std::nullopt;
  }
  auto bitmap = [&](std::size_t at) {
    std::vector<std::uint8_t> bits(n);
    std::memcpy(bits.data(), body + at, n);
    if (probe.count % 8 != 0) bits.back() &= static_cast<std::uint8_t>((1u << (probe.count % 8)) - 1);
    return bits;
  };
  probe.heard_bits = bitmap(kBitsAt);
  probe.reported_bits = bitmap(kBitsAt + n);
  return probe;
}

SegmentCheckCounts check_segment(const SegmentCheck& check) {
  if (check.addresses.size() <= 1) return {};
  FileDescriptor fd(open_packet_socket());
  const std::size_t p = check.addresses.size();
  // Room for a burst of a few probes from every peer at once (every process broadcasts
  // when it has heard everyone): the default (~200 KB) holds a few hundred small frames.
  size_socket_buffer(fd.get(), SO_RCVBUF, SO_RCVBUFFORCE,
                     static_cast<int>(std::min<std::size_t>(64u << 20, std::max<std::size_t>(256u << 10, p * 4096))));
  // The kernel passes only this job's probes addressed to this pid or to everyone (on lo
  // every packet socket would see every probe of every job).
  filter_expression_and_bind(
      fd.get(), check.interface,
      fmt::format("{} and ({} or {})", field_equals({kJobAt, 4, check.job_id}),
                  field_equals({kToAt, 4, static_cast<std::uint32_t>(check.pid)}), field_equals({kToAt, 4, kEveryone})),
      kProbeEtherType);
  ProbeExchange exchange(check, fd.get());
  // The deadline is check.deadline after the last progress (a peer newly heard, or newly
  // hearing us): on a loaded machine the peers come in slowly but come, and only a check
  // that has stopped moving fails.
  const Clock::time_point began = Clock::now();
  Clock::time_point deadline = began + check.deadline;
  std::size_t progress = 0;
  exchange.start(began);
  std::optional<Clock::time_point> passed;
  for (;;) {
    Clock::time_point now = Clock::now();
    exchange.receive_all();
    exchange.step(now);
    if (exchange.progress() != progress) {
      progress = exchange.progress();
      deadline = now + check.deadline;
    }
    if (!passed && exchange.passed()) passed = now;
    if (passed && (exchange.quiet() || now >= *passed + exchange.linger())) {
      close_in_background(std::move(fd));
      return exchange.counts();
    }
    if (!passed && now >= deadline) {
      throw std::runtime_error(
          exchange.failure(check.deadline, std::chrono::duration_cast<std::chrono::milliseconds>(now - began)));
    }
    Clock::time_point wake = std::min(exchange.next_due(), passed ? *passed + exchange.linger() : deadline);
    auto wait = std::chrono::ceil<std::chrono::milliseconds>(wake - Clock::now()).count();
    pollfd readable{fd.get(), POLLIN, 0};
    ::poll(&readable, 1, static_cast<int>(std::clamp<decltype(wait)>(wait, 0, 1000)));
  }
}

}  // namespace bsp::transport::nic
