// bsplib/control/protocol.h: the control plane's messages (launcher/coordinator <-> each
// process), over TCP, separate from the data network as in paper 001 §3.1. A message is
// [u32 body length][u8 type][body]; bodies are built with MessageWriter and read with
// MessageReader (little-endian integers, length-prefixed strings).
#pragma once

#include <chrono>
#include <cstdint>
#include <span>

#include "auth/mac.h"
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace bsp::control {

enum class MessageType : std::uint8_t {
  hello = 1,      // process -> coordinator: i32 pid, i32 requested nprocs, i32 os pid, str address,
                  // str machine (the kernel's boot id: processes with one share its cores)
  start = 2,      // coordinator -> process: i32 nprocs, u32 job id, nprocs x str address,
                  // nprocs x str machine
  excess = 3,     // coordinator -> process: not needed (pid >= nprocs): leave quietly
  abort = 4,      // either way: str message (coordinator -> process: stop now)
  done = 5,       // process -> coordinator: reached bsp_end; str statistics report (may be empty)
  finish = 6,     // coordinator -> process: every process reached bsp_end; close and leave
  stall = 7,      // process -> coordinator: i32 superstep, i32 ms waited in bsp_sync, u32 n,
                  // n x (i32 pid still awaited, i32 ms since anything moved between the two)
                  // (n = 0: the wait is over)
  challenge = 8,  // coordinator -> process, first on every connection: 16 random bytes
  proof = 9,      // process -> coordinator, its first message: u64 session_proof()
  proven = 10,    // coordinator -> process: the proof holds (empty); a session closed before
                  // this came was dropped unproven (a flood pushed it out) and may be retried
};

// The coordinator trusts a session only once its first message proves knowledge of the
// job's secret: a MAC over the session's random challenge. Until then it reads at most
// kMaxUnprovenBody bytes and closes the session after kProofDeadline, at once when it
// closes its end, and earlier when a flood of unproven sessions pushes it out (the oldest
// go first: a member answers within a round trip, so the oldest are the silent ones).
inline constexpr std::size_t kChallengeSize = 16;
inline constexpr std::uint32_t kMaxUnprovenBody = 8;
inline constexpr std::chrono::milliseconds kProofDeadline{2000};

inline std::uint64_t session_proof(const auth::Key& secret, std::string_view challenge) {
  static constexpr std::string_view kPurpose = "bsplib control session";
  return auth::mac(secret, {std::as_bytes(std::span(kPurpose.data(), kPurpose.size())),
                            std::as_bytes(std::span(challenge.data(), challenge.size()))});
}

inline constexpr std::size_t kFrameHeader = 5;        // u32 length + u8 type
inline constexpr std::uint32_t kMaxBody = 16u << 20;  // sanity bound on a message body
// What a proven process may send the coordinator (hello, abort, done, stall) is small.
inline constexpr std::uint32_t kMaxBodyToCoordinator = 1u << 20;

class MessageWriter {
 public:
  explicit MessageWriter(MessageType type) : bytes_(kFrameHeader, '\0') { bytes_[4] = static_cast<char>(type); }
  MessageWriter& i32(std::int32_t value) { return raw(&value, 4); }
  MessageWriter& u32(std::uint32_t value) { return raw(&value, 4); }
  MessageWriter& u64(std::uint64_t value) { return raw(&value, 8); }
  MessageWriter& blob(std::string_view data) { return raw(data.data(), data.size()); }
  MessageWriter& str(std::string_view text) {
    u32(static_cast<std::uint32_t>(text.size()));
    return raw(text.data(), text.size());
  }
  // The finished message, length field filled in (a copy: writers are often temporaries).
  std::string bytes() {
    std::uint32_t body = static_cast<std::uint32_t>(bytes_.size() - kFrameHeader);
    std::memcpy(bytes_.data(), &body, 4);
    return bytes_;
  }

 private:
  MessageWriter& raw(const void* data, std::size_t size) {
    bytes_.append(static_cast<const char*>(data), size);
    return *this;
  }
  std::string bytes_;
};

class MessageReader {
 public:
  explicit MessageReader(std::string_view body) : body_(body) {}
  std::int32_t i32() { return scalar<std::int32_t>(); }
  std::uint32_t u32() { return scalar<std::uint32_t>(); }
  std::uint64_t u64() { return scalar<std::uint64_t>(); }
  std::string str() {
    std::uint32_t size = u32();
    need(size);
    std::string text(body_.substr(0, size));
    body_.remove_prefix(size);
    return text;
  }

 private:
  template <typename T>
  T scalar() {
    need(sizeof(T));
    T value;
    std::memcpy(&value, body_.data(), sizeof(T));
    body_.remove_prefix(sizeof(T));
    return value;
  }
  void need(std::size_t size) const {
    if (body_.size() < size) throw std::runtime_error("truncated control message");
  }
  std::string_view body_;
};

}  // namespace bsp::control
