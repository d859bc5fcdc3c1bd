// tests/fuzz/frame_fuzz.cc: wire::check_frame (recovery/frame_codec.h), the gate every
// arriving frame of udp, nic and tcp passes before anything reads it.
//
// Input: byte 0 = mode, byte 1 = receiver pid, byte 2 = job size (low 3 bits) and
// whether frames carry a MAC (bit 7 set: no, as over links authenticated at set-up whose
// frames cannot be damaged, where FrameKey::authenticate and checksum are false), then the
// frame.
//   mode 0: the bytes as they are (an attacker's datagram);
//   mode 1: the bytes with a correct check written in (an attacker who knows the public
//           checksum but not the job's secret): ok only if the frame carries the MAC the
//           job's key gives it (resealing it changes nothing);
//   mode 2: sealed with the job's key (a member's frame; magic and length set by
//           seal_frame): ok exactly when type, job, source and destination are right;
//   mode 3: sealed, then one bit flipped: never ok when frames carry a MAC, except a flip
//           in the check field: the MAC holds and the receiver does not compute the
//           check, so it is ok exactly when the frame is the receiver's. (Counted corrupt
//           by the 16-bit check, malformed by a header field, or, for the 1 in 65,536
//           flips the check's low half misses, foreign: refused all the same.)
//   mode 4: sealed, then bits flipped and the check recomputed (tampering in transit
//           by someone without the secret): never ok when frames carry a MAC;
//   mode 5: sealed without a MAC (mac field 0), checked by a receiver that wants one (a
//           downgrade): never ok.
// Always: a verdict is one of the four; ok means the header copy says exactly what the
// bytes say and the payload lies inside the frame; every frame is in a heap block of its
// exact size (reads past it are AddressSanitizer reports).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "recovery/frame_codec.h"
#include "tests/fuzz/fuzz_target.h"

namespace {

using namespace bsp::wire;
using bsp::fuzz::ExactCopy;

constexpr std::uint32_t kJob = 0x5EC0417Bu;

const FrameKey& job_key(bool authenticate = true) {
  static const FrameKey with_mac = [] {
    bsp::auth::Key secret{};
    for (std::size_t i = 0; i < secret.size(); ++i) secret[i] = static_cast<std::uint8_t>(0xA5 ^ (i * 29));
    return frame_key(secret);
  }();
  static const FrameKey without_mac = [] {
    FrameKey key = with_mac;
    key.authenticate = false;
    key.checksum = false;
    return key;
  }();
  return authenticate ? with_mac : without_mac;
}

// The header's check (frame_codec.h), written as anyone can.
void write_crc(std::vector<std::uint8_t>& frame) {
  if (frame.size() < kHeaderSize) return;
  auto bytes = std::as_bytes(std::span(frame.data(), frame.size()));
  const std::uint16_t check = frame_check(bytes.first(kHeaderSize), bytes.subspan(kHeaderSize));
  std::memcpy(frame.data() + offsetof(Header, check), &check, sizeof check);
}

Verdict check(const std::vector<std::uint8_t>& bytes, int my_pid, int nprocs, Header& header, bool authenticate) {
  ExactCopy frame(bytes.data(), bytes.size());
  Verdict verdict = check_frame({frame.data(), frame.size()}, job_key(authenticate), kJob, my_pid, nprocs, header);
  FUZZ_CHECK(verdict == Verdict::ok || verdict == Verdict::malformed || verdict == Verdict::foreign ||
             verdict == Verdict::corrupt);
  if (verdict == Verdict::ok) {
    FUZZ_CHECK(frame.size() >= kHeaderSize);
    FUZZ_CHECK(std::memcmp(&header, frame.data(), kHeaderSize) == 0);
    FUZZ_CHECK(std::size_t{header.length} == frame.size() - kHeaderSize);
    FUZZ_CHECK(header.magic == kMagic);
    FUZZ_CHECK(header.type >= 1 && header.type <= 4);
    FUZZ_CHECK(header.job_id == kJob && header.dst == my_pid && header.src < nprocs && header.src != my_pid);
    // The payload the caller reads next.
    std::uint32_t sum = 0;
    for (std::size_t i = kHeaderSize; i < frame.size(); ++i) sum += static_cast<std::uint32_t>(frame.data()[i]);
    volatile std::uint32_t sink = sum;
    (void)sink;
  }
  return verdict;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 3) return 0;
  const int mode = data[0] % 6;
  const int my_pid = data[1] % 8;
  const int nprocs = 1 + data[2] % 8;
  const bool mac = (data[2] & 0x80) == 0;
  std::vector<std::uint8_t> frame(data + 3, data + size);
  Header header{};
  switch (mode) {
    case 0:
      check(frame, my_pid, nprocs, header, mac);
      break;
    case 1:
      write_crc(frame);
      if (check(frame, my_pid, nprocs, header, mac) == Verdict::ok && mac) {
        // Only a frame that carries the key's own MAC passes (a member's frame, or a
        // replay of one: the layer above refuses those by sequence number).
        std::vector<std::uint8_t> resealed = frame;
        seal_frame(std::as_writable_bytes(std::span(resealed.data(), resealed.size())), job_key(mac));
        FUZZ_CHECK(resealed == frame);
      }
      break;
    case 2:
    case 3:
    case 4:
    case 5: {
      if (frame.size() < kHeaderSize || frame.size() > kHeaderSize + 65535) return 0;
      seal_frame(std::as_writable_bytes(std::span(frame.data(), frame.size())), job_key(mode == 5 ? false : mac));
      Header sealed;
      std::memcpy(&sealed, frame.data(), kHeaderSize);
      bool member = sealed.type >= 1 && sealed.type <= 4 && sealed.job_id == kJob && sealed.dst == my_pid &&
                    sealed.src < nprocs && sealed.src != my_pid;
      if (mode == 5) {
        std::uint64_t zero = 0;
        FUZZ_CHECK(std::memcmp(frame.data() + offsetof(Header, mac), &zero, 8) == 0);
        FUZZ_CHECK(check(frame, my_pid, nprocs, header, true) != Verdict::ok);
        break;
      }
      if (mode == 2) {
        Verdict verdict = check(frame, my_pid, nprocs, header, mac);
        FUZZ_CHECK((verdict == Verdict::ok) == member);
        FUZZ_CHECK(member || verdict != Verdict::corrupt);  // a sealed frame is never damaged
        break;
      }
      const std::vector<std::uint8_t> original = frame;
      // Flip bits at positions taken from the payload's end (or the header's bytes).
      std::size_t flips = mode == 3 ? 1 : 1 + frame[frame.size() - 1] % 4;
      for (std::size_t i = 0; i < flips; ++i) {
        std::size_t pick = frame[(i * 7 + 11) % frame.size()] | (frame[(i * 13 + 5) % frame.size()] << 8);
        std::size_t at = pick % frame.size();
        if (mode == 4 && at >= offsetof(Header, check) && at < offsetof(Header, check) + 2) {
          at = offsetof(Header, mac);  // the check is recomputed below: flip something it covers
        }
        frame[at] ^= static_cast<std::uint8_t>(1u << (pick >> 13 & 7));
      }
      if (mode == 4) write_crc(frame);
      if (frame == original) break;  // two flips of one bit cancel: nothing was changed
      Verdict verdict = check(frame, my_pid, nprocs, header, mac);
      bool only_check = true;  // every changed byte lies in the check field
      for (std::size_t i = 0; i < frame.size(); ++i) {
        if (frame[i] != original[i]) only_check &= i >= offsetof(Header, check) && i < offsetof(Header, check) + 2;
      }
      if (mode == 3 && only_check && mac) {
        // The MAC covers all but the check, and holds: the frame is taken without its check.
        FUZZ_CHECK((verdict == Verdict::ok) == member);
      } else if (mac) {
        FUZZ_CHECK(verdict != Verdict::ok);
      }
      break;
    }
  }
  return 0;
}

std::vector<std::vector<std::uint8_t>> fuzz_seeds() {
  std::vector<std::vector<std::uint8_t>> seeds;
  auto sealed = [&](std::uint8_t mode, std::uint8_t type, int src, int dst, std::uint32_t seq, std::size_t payload) {
    std::vector<std::uint8_t> frame(kHeaderSize + payload);
    for (std::size_t i = 0; i < payload; ++i) frame[kHeaderSize + i] = static_cast<std::uint8_t>(i * 7);
    Header header{};
    header.type = type;
    header.job_id = kJob;
    header.src = static_cast<std::uint16_t>(src);
    header.dst = static_cast<std::uint16_t>(dst);
    header.seq = seq;
    header.ack = seq / 2;
    std::memcpy(frame.data(), &header, kHeaderSize);
    seal_frame(std::as_writable_bytes(std::span(frame.data(), frame.size())), job_key());
    std::vector<std::uint8_t> seed{mode, static_cast<std::uint8_t>(dst), 4};
    seed.insert(seed.end(), frame.begin(), frame.end());
    seeds.push_back(std::move(seed));
  };
  for (std::uint8_t mode = 0; mode < 6; ++mode) {
    sealed(mode, 1, 1, 0, 0, 64);
    sealed(mode, 2, 2, 1, 17, 16);
    sealed(mode, 3, 3, 2, 1000000, 32);
    sealed(mode, 4, 0, 3, 5, 0);
  }
  sealed(0, 1, 1, 0, 3, 8000);
  // The same frames for a receiver that wants no MAC.
  for (std::size_t i = 0, n = seeds.size(); i < n; i += 2) {
    seeds.push_back(seeds[i]);
    seeds.back()[2] |= 0x80;
  }
  return seeds;
}
