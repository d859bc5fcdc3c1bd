// auth/mac.cc: SipHash-2-4 over several ranges, through libsodium's crypto_shorthash.
#include "auth/mac.h"

#include <sodium.h>
#include <sys/random.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace bsp::auth {

static_assert(crypto_shorthash_siphash24_KEYBYTES == kKeySize);
static_assert(crypto_shorthash_siphash24_BYTES == 8);

namespace {
// libsodium picks its fastest implementations (SIMD) in sodium_init(); once per process.
void ensure_initialised() {
  static const bool initialised = [] {
    if (sodium_init() < 0) throw std::runtime_error("libsodium failed to initialise");
    return true;
  }();
  (void)initialised;
}
}  // namespace

std::uint64_t mac(const Key& key, std::initializer_list<std::span<const std::byte>> parts) {
  ensure_initialised();
  // SipHash has no incremental interface in libsodium: join the parts (frames are small,
  // and the common case of one part needs no copy).
  std::uint64_t tag = 0;
  if (parts.size() == 1) {
    const auto& part = *parts.begin();
    crypto_shorthash_siphash24(reinterpret_cast<unsigned char*>(&tag),
                               reinterpret_cast<const unsigned char*>(part.data()), part.size(), key.data());
    return tag;
  }
  thread_local std::vector<std::byte> joined;
  joined.clear();
  for (const auto& part : parts) joined.insert(joined.end(), part.begin(), part.end());
  crypto_shorthash_siphash24(reinterpret_cast<unsigned char*>(&tag),
                             reinterpret_cast<const unsigned char*>(joined.data()), joined.size(), key.data());
  return tag;
}

Key derive_key(const Key& key, std::string_view purpose) {
  ensure_initialised();
  Key derived;
  crypto_generichash(derived.data(), derived.size(), reinterpret_cast<const unsigned char*>(purpose.data()),
                     purpose.size(), key.data(), key.size());
  return derived;
}

bool same_tag(std::uint64_t a, std::uint64_t b) { return sodium_memcmp(&a, &b, sizeof a) == 0; }

void random_bytes(std::span<std::byte> buffer) {
  std::size_t done = 0;
  while (done < buffer.size()) {
    ssize_t got = ::getrandom(buffer.data() + done, buffer.size() - done, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("getrandom: ") + std::strerror(errno));
    }
    done += static_cast<std::size_t>(got);
  }
}

}  // namespace bsp::auth
