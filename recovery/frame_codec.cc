// recovery/frame_codec.cc: sealing (length, check, MAC) and checking wire headers.
#include "recovery/frame_codec.h"

#include <cstring>
#include <string_view>

#include "recovery/crc32c.h"

namespace bsp::wire {
namespace {

// The nested MAC (frame_codec.h): one pass over the payload in place, one over a copy of
// the header.
std::uint64_t header_mac(std::span<const std::byte> head, std::uint64_t payload_mac, const FrameKey& key) {
  Header header;
  std::memcpy(&header, head.data(), kHeaderSize);
  header.check = 0;
  header.mac = payload_mac;
  // Four whole words: the inlined SipHash-2-4 rounds (libsodium's result, bulk_mac_test).
  static_assert(sizeof header % 8 == 0);
  return auth::siphash_words(key.header, std::as_bytes(std::span(&header, 1)));
}

std::uint32_t fold_crc(const auth::Fold& fold) { return crc32c(std::as_bytes(std::span(fold))); }

// The check from the CRC32C state after the payload's fold: the header follows, with its
// check field taken as zero.
std::uint16_t finish_check(std::span<const std::byte> head, std::uint32_t crc) {
  constexpr std::size_t check_at = offsetof(Header, check);
  constexpr std::size_t check_size = sizeof(Header::check);
  static constexpr std::byte zeros[check_size] = {};
  crc = crc32c(head.first(check_at), crc);
  crc = crc32c(std::span<const std::byte>(zeros, check_size), crc);
  crc = crc32c(head.subspan(check_at + check_size, kHeaderSize - check_at - check_size), crc);
  return static_cast<std::uint16_t>(crc);
}

// Writes magic, length, mac and check into head. payload_seal: the payload's MAC and fold
// state, or nullptr to take them from the payload here (one pass for both).
void seal(std::span<std::byte> head, std::span<const std::byte> payload, const FrameKey& key,
          const PayloadSeal* payload_seal) {
  PayloadSeal taken;
  if (payload_seal == nullptr) {
    auth::Fold fold{};
    if (key.authenticate) taken.mac = auth::bulk_mac(key.payload, payload, &fold);
    else if (key.checksum) fold = auth::fold_of(payload);
    if (key.checksum) taken.fold_crc = fold_crc(fold);
    payload_seal = &taken;
  }
  Header header;
  std::memcpy(&header, head.data(), kHeaderSize);
  header.magic = kMagic;
  header.length = static_cast<std::uint16_t>(payload.size());
  header.check = 0;
  header.mac = 0;
  std::memcpy(head.data(), &header, kHeaderSize);
  if (key.authenticate) header.mac = header_mac(head, payload_seal->mac, key);
  std::memcpy(head.data() + offsetof(Header, mac), &header.mac, sizeof header.mac);
  if (key.checksum) header.check = finish_check(head, payload_seal->fold_crc);
  std::memcpy(head.data() + offsetof(Header, check), &header.check, sizeof header.check);
}

}  // namespace

std::uint16_t frame_check(std::span<const std::byte> head, std::span<const std::byte> payload) {
  return finish_check(head, fold_crc(auth::fold_of(payload)));
}

FrameKey frame_key(const auth::Key& job_secret) {
  return FrameKey{auth::derive_key(job_secret, "bsplib frame header"),
                  auth::bulk_key(auth::derive_key(job_secret, "bsplib frame payload"))};
}

std::vector<transport::FrameMatch> receive_filter(std::uint32_t job_id, int my_pid) {
  return {{offsetof(Header, job_id), 4, job_id}, {offsetof(Header, dst), 2, static_cast<std::uint32_t>(my_pid)}};
}

void seal_frame(std::span<std::byte> frame, const FrameKey& key) {
  seal_parts(frame.first(kHeaderSize), frame.subspan(kHeaderSize), key);
}

void seal_parts(std::span<std::byte> head, std::span<const std::byte> payload, const FrameKey& key) {
  seal(head, payload, key, nullptr);
}

PayloadSeal copy_payload(std::byte* destination, std::span<const std::byte> payload, const FrameKey& key) {
  PayloadSeal taken;
  auth::Fold fold{};
  if (key.authenticate) {
    taken.mac = auth::bulk_mac_copy(key.payload, destination, payload, &fold);
  } else {
    if (!payload.empty()) std::memcpy(destination, payload.data(), payload.size());
    if (key.checksum) fold = auth::fold_of(payload);
  }
  if (key.checksum) taken.fold_crc = fold_crc(fold);
  return taken;
}

void seal_frame(std::span<std::byte> frame, const FrameKey& key, const PayloadSeal& payload_seal) {
  seal(frame.first(kHeaderSize), frame.subspan(kHeaderSize), key, &payload_seal);
}

Verdict check_frame(std::span<const std::byte> frame, const FrameKey& key, std::uint32_t job_id, int my_pid, int nprocs,
                    Header& header) {
  if (frame.size() < kHeaderSize) return Verdict::malformed;
  return check_parts(frame.first(kHeaderSize), frame.subspan(kHeaderSize), key, job_id, my_pid, nprocs, header);
}

Verdict check_frame_copy(std::span<const std::byte> frame, const FrameKey& key, std::uint32_t job_id, int my_pid,
                         int nprocs, Header& header, std::byte* copy_to) {
  if (frame.size() < kHeaderSize) return Verdict::malformed;
  return check_parts(frame.first(kHeaderSize), frame.subspan(kHeaderSize), key, job_id, my_pid, nprocs, header,
                     copy_to);
}

Verdict check_parts(std::span<const std::byte> head, std::span<const std::byte> payload, const FrameKey& key,
                    std::uint32_t job_id, int my_pid, int nprocs, Header& header, std::byte* copy_to) {
  if (head.size() != kHeaderSize) return Verdict::malformed;
  std::memcpy(&header, head.data(), kHeaderSize);
  if (header.magic != kMagic) return Verdict::malformed;
  if (header.type < static_cast<std::uint8_t>(FrameType::data) ||
      header.type > static_cast<std::uint8_t>(FrameType::probe)) {
    return Verdict::malformed;
  }
  if (header.length != payload.size()) return Verdict::malformed;
  bool addressed = header.job_id == job_id && header.dst == my_pid && header.src < nprocs && header.src != my_pid;
  // A frame whose MAC holds is intact everywhere the MAC covers, which is all but the
  // check field: its check is not computed (one pass over the payload saved per frame).
  // Without a MAC the check is the only test of damage.
  if (addressed && key.authenticate) {
    const std::uint64_t payload_mac = copy_to != nullptr ? auth::bulk_mac_copy(key.payload, copy_to, payload)
                                                         : auth::bulk_mac(key.payload, payload);
    if (auth::same_tag(header_mac(head, payload_mac, key), header.mac)) return Verdict::ok;
  } else if (copy_to != nullptr && !payload.empty()) {
    std::memcpy(copy_to, payload.data(), payload.size());
  }
  // Refused (or unauthenticated): damage is told from a stranger's frame by the check.
  if (key.checksum && frame_check(head, payload) != header.check) return Verdict::corrupt;
  return addressed && !key.authenticate ? Verdict::ok : Verdict::foreign;
}

}  // namespace bsp::wire
