// recovery/frame_codec.h: writing and checking the wire header (recovery/wire.h), shared
// by every channel. check_frame() is the single gate every arriving frame passes: what
// it rejects is counted by the caller and dropped, never trusted.
//
// Two checks guard a frame: a MAC keyed by the job's secret proves it comes from a process
// of the job, and a 16-bit check tells, for a frame the MAC refused, damage (counted as
// corrupt) from a stranger's frame (counted as foreign). The MAC is nested so that a
// received frame needs no copy:
//   mac = SipHash(K_header, header with check = 0 and mac = BulkMac(K_payload, payload))
// with K_header and K_payload derived from the secret for these two purposes only;
// BulkMac (auth/bulk_mac.h) is SipHash-2-4 on short payloads and NH (UMAC's universal hash)
// joined by SipHash on long ones. The check is the low 16 bits of CRC32C over the payload's fold
// (auth::Fold: the XOR of its 64-byte pieces, 64 bytes) followed by the header with the
// check zero: the fold comes out of the MAC's pass, so sealing reads the payload once
// (a CRC32C of every payload byte was a second pass, 8% of a bulk transfer's time).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "auth/bulk_mac.h"
#include "auth/mac.h"
#include "recovery/wire.h"
#include "transport/transport.h"

namespace bsp::wire {

enum class Verdict {
  ok,
  malformed,  // shorter than a header, wrong magic (format version) or type, length disagrees
  foreign,    // not from a process of this job (MAC), another job, not for this pid
  corrupt,    // the check (CRC32C, low 16 bits) does not match
};

// The keys frames are sealed with, derived from the job's secret.
struct FrameKey {
  auth::Key header{};
  auth::BulkKey payload{};  // the payload's MAC: NH, then SipHash, on long payloads
  // false over links authenticated at set-up (Capabilities::authenticated_links): the
  // mac field is zero and not checked.
  bool authenticate = true;
  // false over a transport that cannot damage a frame (Capabilities::intact: memory):
  // the check field is zero and not checked.
  bool checksum = true;
};
FrameKey frame_key(const auth::Key& job_secret);

// The check field's value for a header (kHeaderSize bytes; its own check field is taken as
// zero) and the payload after it: the low 16 bits of CRC32C over the payload's fold, then
// the header. Public, as anyone can compute it: it tells damage, never origin.
std::uint16_t frame_check(std::span<const std::byte> head, std::span<const std::byte> payload);

// What sealing needs of a payload, taken in the pass that copies it into a frame: its MAC
// (0 where frames carry none) and the CRC32C state after its fold (0 where frames carry
// no check).
struct PayloadSeal {
  std::uint64_t mac = 0;
  std::uint32_t fold_crc = 0;
};

// Fills header fields magic, length, check and mac for a frame laid out as
// [Header][payload] in frame (frame.size() == kHeaderSize + payload length). The caller
// sets every other field first. Use seal_frame() again after changing any field (e.g. a
// piggy-backed ack written at transmit time).
void seal_frame(std::span<std::byte> frame, const FrameKey& key);
// The same for a header whose payload lies elsewhere (a gathered send: the payload goes
// from where it is, after this header, without being copied next to it first).
void seal_parts(std::span<std::byte> head, std::span<const std::byte> payload, const FrameKey& key);
// Copies a payload to destination and returns its seal (auth::bulk_mac_copy: one pass);
// seal_frame(frame, key, that seal) then seals a frame holding that payload without
// reading it again (the payload must be unchanged).
PayloadSeal copy_payload(std::byte* destination, std::span<const std::byte> payload, const FrameKey& key);
void seal_frame(std::span<std::byte> frame, const FrameKey& key, const PayloadSeal& payload_seal);
// The same from the header's fields as the caller holds them (every field but magic,
// length, check and mac set): writes the sealed header to head (kHeaderSize bytes) for a
// payload of payload_size bytes, so a header changed for this transmission is written once.
void seal_header(std::span<std::byte> head, const Header& header, std::size_t payload_size, const FrameKey& key,
                 const PayloadSeal& payload_seal);

// Checks an arrived frame. On ok, header receives a copy of its header and the payload
// is frame.subspan(kHeaderSize, header.length). A frame whose MAC holds is ok without its
// check being computed (the MAC covers every byte but the check field, so a frame
// damaged only there is taken, rightly); the check is computed for a frame refused, to
// count it corrupt (damaged) rather than foreign, and for every frame when frames carry
// no MAC.
// The header fields every frame for my_pid of job job_id carries, for transports that
// let the kernel drop the rest (nic's BPF filter).
std::vector<transport::FrameMatch> receive_filter(std::uint32_t job_id, int my_pid);

Verdict check_frame(std::span<const std::byte> frame, const FrameKey& key, std::uint32_t job_id, int my_pid, int nprocs,
                    Header& header);
// The same, while copying the payload to copy_to (exactly its length; auth::bulk_mac_copy:
// the copy rides on the MAC's pass). The copy is of unverified bytes: the caller keeps it
// out of use unless the verdict is ok.
Verdict check_frame_copy(std::span<const std::byte> frame, const FrameKey& key, std::uint32_t job_id, int my_pid,
                         int nprocs, Header& header, std::byte* copy_to);
// The same for a frame whose header and payload lie apart (udp's placement: the payload
// read straight into the engine's stream): every check and the MAC over exactly these bytes.
Verdict check_parts(std::span<const std::byte> head, std::span<const std::byte> payload, const FrameKey& key,
                    std::uint32_t job_id, int my_pid, int nprocs, Header& header, std::byte* copy_to = nullptr);

}  // namespace bsp::wire
