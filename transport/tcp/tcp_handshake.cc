// transport/tcp/tcp_handshake.cc: the handshake's messages (layouts in tcp_handshake.h).
#include "transport/tcp/tcp_handshake.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <string_view>

namespace bsp::transport::tcp {
namespace {

constexpr std::string_view kHelloPurpose = "bsplib tcp hello";
constexpr std::string_view kWelcomePurpose = "bsplib tcp welcome";

void put_u32(std::byte* at, std::uint32_t value) {
  for (int i = 0; i < 4; ++i) at[i] = static_cast<std::byte>(value >> (8 * i));
}
std::uint32_t get_u32(const std::byte* at) {
  std::uint32_t value = 0;
  for (int i = 0; i < 4; ++i) value |= std::to_integer<std::uint32_t>(at[i]) << (8 * i);
  return value;
}
void put_u64(std::byte* at, std::uint64_t value) {
  for (int i = 0; i < 8; ++i) at[i] = static_cast<std::byte>(value >> (8 * i));
}
std::uint64_t get_u64(const std::byte* at) {
  std::uint64_t value = 0;
  for (int i = 0; i < 8; ++i) value |= std::to_integer<std::uint64_t>(at[i]) << (8 * i);
  return value;
}

// MAC(secret, purpose | job id | from | to | first | second).
std::uint64_t handshake_tag(const auth::Key& secret, std::string_view purpose, std::uint32_t job_id, int from, int to,
                            const Nonce& first, const Nonce& second) {
  std::array<std::byte, 12> fields;
  put_u32(fields.data(), job_id);
  put_u32(fields.data() + 4, static_cast<std::uint32_t>(from));
  put_u32(fields.data() + 8, static_cast<std::uint32_t>(to));
  return auth::mac(secret, {std::as_bytes(std::span(purpose.data(), purpose.size())), fields, first, second});
}

}  // namespace

Challenge make_challenge(std::uint32_t job_id, int acceptor, const Nonce& acceptor_nonce) {
  Challenge challenge;
  put_u32(challenge.data(), job_id);
  put_u32(challenge.data() + 4, static_cast<std::uint32_t>(acceptor));
  std::memcpy(challenge.data() + 8, acceptor_nonce.data(), kNonceSize);
  return challenge;
}

ChallengeFields read_challenge(const Challenge& challenge) {
  ChallengeFields fields;
  fields.job_id = get_u32(challenge.data());
  fields.acceptor = static_cast<int>(get_u32(challenge.data() + 4));
  std::memcpy(fields.nonce.data(), challenge.data() + 8, kNonceSize);
  return fields;
}

Hello make_hello(const auth::Key& secret, std::uint32_t job_id, int dialer, int acceptor, const Nonce& acceptor_nonce,
                 const Nonce& dialer_nonce) {
  Hello hello;
  put_u32(hello.data(), static_cast<std::uint32_t>(dialer));
  std::memcpy(hello.data() + 4, dialer_nonce.data(), kNonceSize);
  put_u64(hello.data() + 4 + kNonceSize,
          handshake_tag(secret, kHelloPurpose, job_id, dialer, acceptor, acceptor_nonce, dialer_nonce));
  return hello;
}

int hello_pid(const Hello& hello) { return static_cast<int>(get_u32(hello.data())); }

Nonce hello_nonce(const Hello& hello) {
  Nonce nonce;
  std::memcpy(nonce.data(), hello.data() + 4, kNonceSize);
  return nonce;
}

bool hello_verifies(const auth::Key& secret, std::uint32_t job_id, int dialer, int acceptor,
                    const Nonce& acceptor_nonce, const Hello& hello) {
  std::uint64_t expected = handshake_tag(secret, kHelloPurpose, job_id, dialer, acceptor, acceptor_nonce,
                                         hello_nonce(hello));
  return auth::same_tag(get_u64(hello.data() + 4 + kNonceSize), expected);
}

Welcome make_welcome(const auth::Key& secret, std::uint32_t job_id, int acceptor, int dialer, const Nonce& dialer_nonce,
                     const Nonce& acceptor_nonce) {
  Welcome welcome;
  put_u64(welcome.data(),
          handshake_tag(secret, kWelcomePurpose, job_id, acceptor, dialer, dialer_nonce, acceptor_nonce));
  return welcome;
}

bool welcome_verifies(const auth::Key& secret, std::uint32_t job_id, int acceptor, int dialer,
                      const Nonce& dialer_nonce, const Nonce& acceptor_nonce, const Welcome& welcome) {
  std::uint64_t expected = handshake_tag(secret, kWelcomePurpose, job_id, acceptor, dialer, dialer_nonce,
                                         acceptor_nonce);
  return auth::same_tag(get_u64(welcome.data()), expected);
}

Got read_exact(int fd, std::span<std::byte> buffer, std::size_t& have, std::string& why) {
  while (have < buffer.size()) {
    ssize_t n = ::recv(fd, buffer.data() + have, buffer.size() - have, MSG_DONTWAIT);
    if (n > 0) {
      have += static_cast<std::size_t>(n);
      continue;
    }
    if (n == 0) {
      why = "closed the connection";
      return Got::failed;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return Got::partial;
    why = std::strerror(errno);
    return Got::failed;
  }
  return Got::complete;
}

bool send_whole(int fd, std::span<const std::byte> bytes) {
  ssize_t n;
  do {
    n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  } while (n < 0 && errno == EINTR);
  return n == static_cast<ssize_t>(bytes.size());
}

}  // namespace bsp::transport::tcp
