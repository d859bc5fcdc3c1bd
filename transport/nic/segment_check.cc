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

namespace bsp::transport::nic {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr auto kInterval = 10ms;  // between rounds of probes to the peers still missing
constexpr auto kLinger = 50ms;    // answering after the check passed, for a last probe lost
constexpr std::size_t kMostListed = 8;  // pids described in a failure
constexpr int kMostPerWake = 4096;      // probes taken before the clock is looked at again

// Probe body, after the Ethernet header (little-endian):
//   0 u32 magic | 4 u32 job id | 8 u32 from | 12 u32 to | 16 u8 heard | 17 u64 MAC(0..17)
constexpr std::uint32_t kMagic = 0x424E5350;  // "PSNB" on the wire
constexpr std::size_t kJobAt = 4, kFromAt = 8, kToAt = 12, kHeardAt = 16, kTagAt = 17, kBodyBytes = 25;
constexpr std::string_view kPurpose = "bsplib nic segment probe";
static_assert(kEthernetHeader + kBodyBytes <= kProbeFrameBytes);

void put_u32(std::byte* at, std::uint32_t value) {
  for (int i = 0; i < 4; ++i) at[i] = static_cast<std::byte>(value >> (8 * i));
}
void put_u64(std::byte* at, std::uint64_t value) {
  for (int i = 0; i < 8; ++i) at[i] = static_cast<std::byte>(value >> (8 * i));
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

std::uint64_t probe_tag(const auth::Key& secret, const std::byte* body) {
  return auth::mac(secret, {std::as_bytes(std::span(kPurpose.data(), kPurpose.size())),
                            std::span<const std::byte>(body, kTagAt)});
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

// What this process knows of each peer and has told it; sends and answers probes.
class ProbeExchange {
 public:
  ProbeExchange(const SegmentCheck& check, int fd)
      : check_(check), fd_(fd), peers_(check.addresses.size()) {}

  // A probe to every peer that still lacks something from us or we from it.
  void send_round() {
    for (int peer = 0; peer < static_cast<int>(peers_.size()); ++peer) {
      const Peer& state = peers_[static_cast<std::size_t>(peer)];
      if (peer != check_.pid && (state.heard < 2 || state.reported < 2)) send(peer);
    }
  }

  // Takes the probes that have arrived (a bounded number: a flood must not hold off the
  // deadline), answering those whose sender we have news for.
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

  // Every peer has heard us and we it.
  bool passed() const {
    for (int peer = 0; peer < static_cast<int>(peers_.size()); ++peer) {
      if (peer != check_.pid && peers_[static_cast<std::size_t>(peer)].heard < 2) return false;
    }
    return true;
  }
  // Every peer has said its check passed as far as we are concerned: nobody needs us.
  bool quiet() const {
    for (int peer = 0; peer < static_cast<int>(peers_.size()); ++peer) {
      if (peer != check_.pid && peers_[static_cast<std::size_t>(peer)].reported < 2) return false;
    }
    return true;
  }

  std::string failure(std::chrono::milliseconds waited) const {
    std::vector<int> unheard, deaf;
    for (int peer = 0; peer < static_cast<int>(peers_.size()); ++peer) {
      if (peer == check_.pid) continue;
      if (peers_[static_cast<std::size_t>(peer)].heard == 0) unheard.push_back(peer);
      if (peers_[static_cast<std::size_t>(peer)].reported < 1) deaf.push_back(peer);
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
        "nic transport: {} could not exchange raw Ethernet frames with every process within {} ms: {}. Their "
        "interfaces are not on one Ethernet segment{}. Give every process an interface on one Ethernet segment "
        "(--iface=NAME), or use --transport=udp or --transport=tcp; --connect-timeout-ms=MS sets how long this "
        "check waits. (A process that stopped before this check says why in its own error.)",
        self.describe(check_.pid), waited.count(), what, why_not(unheard));
  }

  // A hint for the two cases a user meets most: lo across namespaces or hosts, and
  // processes sharing one host's interface.
  std::string why_not(const std::vector<int>& unheard) const {
    const NicAddress& self = check_.addresses[static_cast<std::size_t>(check_.pid)];
    if (self.host_local()) {
      return fmt::format(": {} reaches only processes on one host and in one network namespace", self.interface);
    }
    return "";
  }

 private:
  struct Peer {
    int heard = 0;      // what we know of it: 0 nothing, 1 heard it, 2 and it heard us
    int reported = -1;  // the most it has said it knows of us (-1: nothing from it yet)
    int told = -1;      // the most we have said to it
  };

  void take(const Probe& probe) {
    Peer& peer = peers_[probe.from];
    peer.reported = std::max(peer.reported, static_cast<int>(probe.heard));
    peer.heard = std::max(peer.heard, probe.heard >= 1 ? 2 : 1);
    // Answer at once when we know more than we have told it, or it has not heard us:
    // every answer says at least 1, which lifts the receiver to 2, so this ends.
    if (peer.heard > peer.told || probe.heard < 2) send(static_cast<int>(probe.from));
  }

  void send(int peer) {
    Peer& state = peers_[static_cast<std::size_t>(peer)];
    Probe probe{check_.job_id, static_cast<std::uint32_t>(check_.pid), static_cast<std::uint32_t>(peer),
                static_cast<std::uint8_t>(state.heard)};
    ProbeFrame frame =
        encode_probe(probe, check_.addresses[static_cast<std::size_t>(peer)].mac, check_.interface.mac, check_.secret);
    ssize_t sent;
    do sent = ::send(fd_, frame.data(), frame.size(), MSG_DONTWAIT);
    while (sent < 0 && errno == EINTR);
    if (sent < 0 && permanent_send_error(errno)) {
      throw std::runtime_error(fmt::format("nic transport: sending on {} failed: {}", check_.interface.name,
                                           std::strerror(errno)));
    }
    // A transient failure (no buffer) is a probe lost: the next round sends it again.
    if (sent >= 0) state.told = std::max(state.told, state.heard);
  }

  const SegmentCheck& check_;
  int fd_;
  std::vector<Peer> peers_;
};

}  // namespace

ProbeFrame encode_probe(const Probe& probe, const MacAddress& destination, const MacAddress& source,
                        const auth::Key& secret) {
  ProbeFrame frame{};
  std::memcpy(frame.data(), destination.data(), 6);
  std::memcpy(frame.data() + 6, source.data(), 6);
  frame[12] = std::byte{kProbeEtherType >> 8};
  frame[13] = std::byte{kProbeEtherType & 0xFF};
  std::byte* body = frame.data() + kEthernetHeader;
  put_u32(body, kMagic);
  put_u32(body + kJobAt, probe.job_id);
  put_u32(body + kFromAt, probe.from);
  put_u32(body + kToAt, probe.to);
  body[kHeardAt] = std::byte{probe.heard};
  put_u64(body + kTagAt, probe_tag(secret, body));
  return frame;
}

std::optional<Probe> decode_probe(std::span<const std::byte> frame, std::uint32_t job_id, int to,
                                  const std::vector<NicAddress>& addresses, const auth::Key& secret) {
  if (frame.size() < kEthernetHeader + kBodyBytes) return std::nullopt;
  if (frame[12] != std::byte{kProbeEtherType >> 8} || frame[13] != std::byte{kProbeEtherType & 0xFF}) {
    return std::nullopt;
  }
  const std::byte* body = frame.data() + kEthernetHeader;
  Probe probe{get_u32(body + kJobAt), get_u32(body + kFromAt), get_u32(body + kToAt),
              std::to_integer<std::uint8_t>(body[kHeardAt])};
  if (get_u32(body) != kMagic || probe.job_id != job_id || to < 0 || probe.to != static_cast<std::uint32_t>(to) ||
      probe.from >= addresses.size() || probe.from == probe.to || probe.heard > 2) {
    return std::nullopt;
  }
  if (!same_mac(frame.data() + 6, addresses[probe.from].mac)) return std::nullopt;
  if (!auth::same_tag(get_u64(body + kTagAt), probe_tag(secret, body))) return std::nullopt;
  return probe;
}

void check_segment(const SegmentCheck& check) {
  if (check.addresses.size() <= 1) return;
  FileDescriptor fd(open_packet_socket());
  // The kernel passes only this job's probes addressed to this pid (on lo every packet
  // socket would see every probe of every job).
  filter_and_bind(fd.get(), check.interface,
                  {{kJobAt, 4, check.job_id}, {kToAt, 4, static_cast<std::uint32_t>(check.pid)}}, kProbeEtherType);
  ProbeExchange exchange(check, fd.get());
  const Clock::time_point deadline = Clock::now() + check.deadline;
  Clock::time_point next_round = Clock::now();
  std::optional<Clock::time_point> passed;
  for (;;) {
    Clock::time_point now = Clock::now();
    if (now >= next_round) {
      exchange.send_round();
      next_round = now + kInterval;
    }
    exchange.receive_all();
    if (!passed && exchange.passed()) passed = now;
    if (passed && (exchange.quiet() || now >= *passed + kLinger)) {
      close_in_background(std::move(fd));
      return;
    }
    if (!passed && now >= deadline) throw std::runtime_error(exchange.failure(check.deadline));
    Clock::time_point wake = std::min(next_round, passed ? *passed + kLinger : deadline);
    auto wait = std::chrono::ceil<std::chrono::milliseconds>(wake - Clock::now()).count();
    pollfd readable{fd.get(), POLLIN, 0};
    ::poll(&readable, 1, static_cast<int>(std::max<decltype(wait)>(wait, 0)));
  }
}

}  // namespace bsp::transport::nic
