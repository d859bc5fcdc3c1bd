// recovery/frame_codec.cc: sealing (length, check, MAC) and checking wire headers.
#include "recovery/frame_codec.h"

#include <array>
#include <cstring>
#include <string_view>

#include "recovery/crc32c.h"

namespace bsp::wire {
namespace {

// The header's four little-endian words, formed from its fields in registers, with magic,
// length, check and mac given. Sealing comes right after this transmission's fields (ack,
// credit, flags) were written one by one; read back from memory a word or 16 bytes at a
// time, the header waited at every such load for those narrower stores to drain (store
// forwarding fails), and the stalls cost more than the header's SipHash.
std::array<std::uint64_t, 4> header_words(const Header& header, std::uint8_t magic, std::uint16_t length,
                                          std::uint16_t check, std::uint64_t mac) {
  const std::uint64_t type_flags = std::uint64_t{header.type} | std::uint64_t{header.flags} << 4;
  return {std::uint64_t{magic} | type_flags << 8 | std::uint64_t{check} << 16 | std::uint64_t{header.job_id} << 32,
          std::uint64_t{header.src} | std::uint64_t{header.dst} << 16 | std::uint64_t{header.seq} << 32,
          std::uint64_t{header.ack} | std::uint64_t{length} << 32 | std::uint64_t{header.credit} << 48, mac};
}

// The nested MAC (frame_codec.h): one pass over the payload in place, then SipHash-2-4 of
// the header's words with the check zero and the payload's MAC in the mac field.
std::uint64_t header_mac(const Header& header, std::uint8_t magic, std::uint16_t length, std::uint64_t payload_mac,
                         const FrameKey& key) {
  const std::array<std::uint64_t, 4> words = header_words(header, magic, length, 0, payload_mac);
  return auth::siphash_words(key.header, std::as_bytes(std::span(words)));
}

std::uint32_t fold_crc(const auth::Fold& fold) { return crc32c(std::as_bytes(std::span(fold))); }

// The check from the CRC32C state after the payload's fold: the header follows, with its
// check field taken as zero.
std::uint16_t finish_check(const Header& header, std::uint8_t magic, std::uint16_t length, std::uint64_t mac,
                           std::uint32_t crc) {
  const std::array<std::uint64_t, 4> words = header_words(header, magic, length, 0, mac);
  return static_cast<std::uint16_t>(crc32c(std::as_bytes(std::span(words)), crc));
}

void store_word(std::byte* at, std::uint64_t word) { std::memcpy(at, &word, sizeof word); }

Header header_of(std::span<const std::byte> head) {
  Header header;
  std::memcpy(&header, head.data(), kHeaderSize);
  return header;
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
  seal_header(head, header_of(head), payload.size(), key, *payload_seal);
}

}  // namespace

std::uint16_t frame_check(std::span<const std::byte> head, std::span<const std::byte> payload) {
  const Header header = header_of(head);
  return finish_check(header, header.magic, header.length, header.mac, fold_crc(auth::fold_of(payload)));
}

void seal_header(std::span<std::byte> head, const Header& header, std::size_t payload_size, const FrameKey& key,
                 const PayloadSeal& payload_seal) {
  const auto length = static_cast<std::uint16_t>(payload_size);
  const std::uint64_t mac = key.authenticate ? header_mac(header, kMagic, length, payload_seal.mac, key) : 0;
  const std::uint16_t check = key.checksum ? finish_check(header, kMagic, length, mac, payload_seal.fold_crc) : 0;
  // Each word stored from its register as formed (a copy of the array went through the
  // stack and read it back wider than it was written).
  const auto [word0, word1, word2, word3] = header_words(header, kMagic, length, check, mac);
  store_word(head.data(), word0);
  store_word(head.data() + 8, word1);
  store_word(head.data() + 16, word2);
  store_word(head.data() + 24, word3);
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
    if (auth::same_tag(header_mac(header, header.magic, header.length, payload_mac, key), header.mac)) {
      return Verdict::ok;
    }
  } else if (copy_to != nullptr && !payload.empty()) {
    std::memcpy(copy_to, payload.data(), payload.size());
  }
  // Refused (or unauthenticated): damage is told from a stranger's frame by the check.
  if (key.checksum && frame_check(head, payload) != header.check) return Verdict::corrupt;
  return addressed && !key.authenticate ? Verdict::ok : Verdict::foreign;
}

}  // namespace bsp::wire
