// transport/nic/segment_check.h: proves at set-up, by trying, that every process of a nic
// job can exchange raw frames with every other on the interfaces they published, so a
// job whose interfaces are not on one Ethernet segment stops at once naming the pids,
// instead of hanging in its first bsp_sync until the link timeout.
//
// On a second, temporary packet socket (EtherType 0x88B6, its own so no probe reaches
// the data ring) every process sends each peer a small probe every 10 ms, and answers
// a probe at once when it has news for the sender. A probe says how much the sender
// knows of the receiver: 0 nothing, 1 "I have heard you", 2 "I have heard you and you
// have heard me". The check passes when every peer is at 2 here; the process then keeps
// answering until every peer has said 2 too (at most 50 ms, for a last probe lost), and
// closes the socket. Probes carry the job id and both pids and a MAC keyed by the job's
// secret; anything else on the EtherType is ignored.
#pragma once

#include <array>
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

struct Probe {
  std::uint32_t job_id = 0;
  std::uint32_t from = 0;
  std::uint32_t to = 0;
  std::uint8_t heard = 0;  // 0, 1 or 2 (above)
};

// A whole probe frame, Ethernet header included, padded to Ethernet's 60-byte minimum.
inline constexpr std::size_t kProbeFrameBytes = 60;
using ProbeFrame = std::array<std::byte, kProbeFrameBytes>;

ProbeFrame encode_probe(const Probe& probe, const MacAddress& destination, const MacAddress& source,
                        const auth::Key& secret);

// The probe in a received frame (Ethernet header included) if it is one of this job's,
// addressed to pid `to`, from a pid of the job other than `to` whose published MAC is
// the frame's source, with a good MAC; nothing otherwise.
std::optional<Probe> decode_probe(std::span<const std::byte> frame, std::uint32_t job_id, int to,
                                  const std::vector<NicAddress>& addresses, const auth::Key& secret);

struct SegmentCheck {
  int pid = 0;
  std::uint32_t job_id = 0;
  auth::Key secret{};
  Interface interface;               // this process's, bound as published
  std::vector<NicAddress> addresses;  // every pid's, this one's included
  std::chrono::milliseconds deadline{5000};
};

// Runs the check (nothing with one process). Throws std::runtime_error naming the pids
// not heard from and those that did not hear this one, their hosts, interfaces and MACs.
void check_segment(const SegmentCheck& check);

}  // namespace bsp::transport::nic
