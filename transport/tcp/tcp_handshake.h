// transport/tcp/tcp_handshake.h: tcp's authenticated handshake, message by message: the
// layouts below, building and checking each message with the job's secret, and the two
// non-blocking socket helpers set-up reads and writes them with. No state, no policy:
// which connection survives and when a connection is made is tcp_transport.cc's job.
//
// A = the accepting pid, D = the dialing pid; integers little-endian:
//
//   A -> D  challenge  u32 job id, i32 A, 16 random bytes nA                     (24 bytes)
//   D -> A  hello      i32 D, 16 random bytes nD,
//                      u64 MAC(secret, "bsplib tcp hello"   | job id | D | A | nA | nD)  (28)
//   A -> D  welcome    u64 MAC(secret, "bsplib tcp welcome" | job id | A | D | nD | nA)  (8)
//
// (MAC = SipHash-2-4, auth/mac.h; the two purpose strings keep one answer from serving as
// the other, the nonces keep a recorded answer from serving another connection.)
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "auth/mac.h"

namespace bsp::transport::tcp {

inline constexpr std::size_t kNonceSize = 16;
inline constexpr std::size_t kChallengeSize = 4 + 4 + kNonceSize;
inline constexpr std::size_t kHelloSize = 4 + kNonceSize + 8;
inline constexpr std::size_t kWelcomeSize = 8;

using Nonce = std::array<std::byte, kNonceSize>;
using Challenge = std::array<std::byte, kChallengeSize>;
using Hello = std::array<std::byte, kHelloSize>;
using Welcome = std::array<std::byte, kWelcomeSize>;

// The fields of a challenge as read (unchecked: the caller compares them).
struct ChallengeFields {
  std::uint32_t job_id = 0;
  int acceptor = 0;
  Nonce nonce{};
};

Challenge make_challenge(std::uint32_t job_id, int acceptor, const Nonce& acceptor_nonce);
ChallengeFields read_challenge(const Challenge& challenge);

Hello make_hello(const auth::Key& secret, std::uint32_t job_id, int dialer, int acceptor, const Nonce& acceptor_nonce,
                 const Nonce& dialer_nonce);
// The pid a hello claims (before anything is verified).
int hello_pid(const Hello& hello);
Nonce hello_nonce(const Hello& hello);
// Whether hello was made with the secret by `dialer` for this acceptor's challenge.
bool hello_verifies(const auth::Key& secret, std::uint32_t job_id, int dialer, int acceptor,
                    const Nonce& acceptor_nonce, const Hello& hello);

Welcome make_welcome(const auth::Key& secret, std::uint32_t job_id, int acceptor, int dialer, const Nonce& dialer_nonce,
                     const Nonce& acceptor_nonce);
bool welcome_verifies(const auth::Key& secret, std::uint32_t job_id, int acceptor, int dialer,
                      const Nonce& dialer_nonce, const Nonce& acceptor_nonce, const Welcome& welcome);

// Reads into buffer[have, size) without blocking. complete: full; partial: the kernel has
// no more now; failed: the connection closed or broke (why says how).
enum class Got { complete, partial, failed };
Got read_exact(int fd, std::span<std::byte> buffer, std::size_t& have, std::string& why);

// Sends a handshake message whole. It is the first thing written on a fresh connection
// (at most 28 bytes, after at most 24 more), so the kernel's empty send buffer always
// takes it; anything else is a broken connection.
bool send_whole(int fd, std::span<const std::byte> bytes);

}  // namespace bsp::transport::tcp
