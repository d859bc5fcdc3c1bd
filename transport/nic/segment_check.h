// transport/nic/segment_check.h: proves at set-up, by trying, that every process of a nic
// job can exchange raw frames with every other on the interfaces they published, so a
// job whose interfaces are not on one Ethernet segment stops at once naming the pids,
// instead of hanging in its first bsp_sync until the link timeout.
//
// On a second, temporary packet socket (EtherType 0x88B6, its own so no probe reaches
// the data ring) every process says, in probes, which pids it has heard and which have
// said they heard it: two bitmaps, one bit per pid. A probe goes to every process at once
// (Ethernet broadcast) or to one (unicast, to its published MAC). Each process
// broadcasts when it starts, when it has heard everyone, and when it has passed; in
// between it answers the peers whose probe shows they have not heard it, or do not know
// it heard them (gathered: at most one answer per gap of 5 ms, p² µs beyond 70 processes,
// and one broadcast instead of many unicasts), and sends again, with backoff, to the peers
// still missing, in case a probe was lost. A process passes when it has heard every peer
// and every peer has said it heard it; it then keeps answering until every peer has said
// it passed too (or the linger runs out, for a last probe lost), and closes the socket.
// Probes carry the job id, the sender's pid and a MAC keyed by the job's secret; anything
// else on the EtherType is ignored. A segment is taken to carry broadcasts wherever it
// carries frames to a MAC address (Ethernet: a switch floods both alike).
//
// Cost: a few broadcasts per process when the processes start together, so O(p) frames
// received per process (the old check, a probe per pair every 10 ms, sent O(p²) frames per
// round, each seen by every packet socket on lo: it ran out of time at p = 64).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "auth/mac.h"
#include "transport/nic/nic_address.h"
#include "transport/nic/packet_socket.h"

namespace bsp::transport::nic {

inline constexpr std::uint16_t kProbeEtherType = 0x88B6;  // the next "local experimental" one
inline constexpr std::uint32_t kEveryone = 0xFFFFFFFF;    // Probe::to of a broadcast
// Bits of each bitmap one probe carries at most (2 × 512 bytes: a probe fits any Ethernet
// frame); a larger job's broadcast is several probes, each a range of pids.
inline constexpr std::uint32_t kMostProbeBits = 4096;

struct Probe {
  std::uint32_t job_id = 0;
  std::uint32_t from = 0;
  std::uint32_t to = kEveryone;  // a pid, or kEveryone
  bool passed = false;           // `from` has heard everyone and everyone has heard it
  std::uint32_t first = 0;       // the bitmaps cover pids first .. first + count - 1
  std::uint32_t count = 0;       // 1 .. kMostProbeBits
  // (count + 7) / 8 bytes each; bit k (of byte k / 8) is about pid first + k:
  std::vector<std::uint8_t> heard_bits;     // `from` has heard it
  std::vector<std::uint8_t> reported_bits;  // it has said it heard `from`

  bool covers(std::uint32_t pid) const { return pid >= first && pid - first < count; }
  bool heard(std::uint32_t pid) const { return covers(pid) && bit(heard_bits, pid - first); }
  bool reported(std::uint32_t pid) const { return covers(pid) && bit(reported_bits, pid - first); }
  static bool bit(const std::vector<std::uint8_t>& bits, std::uint32_t k) { return (bits[k / 8] >> (k % 8)) & 1; }
};

// A whole probe frame, Ethernet header included, padded to Ethernet's 60-byte minimum.
// The destination is the broadcast address when probe.to is kEveryone.
std::vector<std::byte> encode_probe(const Probe& probe, const MacAddress& destination, const MacAddress& source,
                                    const auth::Key& secret);

// The probe in a received frame (Ethernet header included) if it is one of this job's,
// addressed to pid `to` or to everyone, from a pid of the job other than `to` whose
// published MAC is the frame's source, with a bitmap inside the job, and a good MAC;
// nothing otherwise.
std::optional<Probe> decode_probe(std::span<const std::byte> frame, std::uint32_t job_id, int to,
                                  const std::vector<NicAddress>& addresses, const auth::Key& secret);

struct SegmentCheck {
  int pid = 0;
  std::uint32_t job_id = 0;
  auth::Key secret{};
  Interface interface;                // this process's, bound as published
  std::vector<NicAddress> addresses;  // every pid's, this one's included
  // Fails when this long passes without progress (a peer newly heard or newly hearing us).
  std::chrono::milliseconds deadline{5000};
};

// What one process's check sent and received (for tests and benchmarks).
struct SegmentCheckCounts {
  std::size_t broadcasts = 0;  // probe frames sent to everyone
  std::size_t unicasts = 0;    // probe frames sent to one peer
  std::size_t received = 0;    // probes of this job taken
};

// Runs the check (nothing with one process). Throws std::runtime_error naming the pids
// not heard from and those that did not hear this one, their hosts, interfaces and MACs.
SegmentCheckCounts check_segment(const SegmentCheck& check);

}  // namespace bsp::transport::nic
