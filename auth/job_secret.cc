// auth/job_secret.cc: making the job's secret and handing it to child processes.
#include "auth/job_secret.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace bsp::auth {

Key make_job_secret() {
  Key key;
  random_bytes(std::as_writable_bytes(std::span(key)));
  return key;
}

int secret_descriptor(const Key& key) {
  // Close-on-exec: only the children meant to have it (which clear the flag between fork
  // and exec) inherit it, not a remote shell or anything else the launcher starts.
  int fd = ::memfd_create("bsp-job-secret", MFD_CLOEXEC);
  if (fd < 0) throw std::runtime_error(fmt::format("memfd_create: {}", std::strerror(errno)));
  // A memory file is made with mode 0777; the owner's read and write are all it needs.
  if (::fchmod(fd, 0600) != 0 || ::pwrite(fd, key.data(), key.size(), 0) != static_cast<ssize_t>(key.size())) {
    ::close(fd);
    throw std::runtime_error(fmt::format("writing the job secret: {}", std::strerror(errno)));
  }
  return fd;
}

std::optional<Key> inherited_job_secret() {
  const char* text = std::getenv(kSecretFdVariable);
  if (!text || !*text) return std::nullopt;
  char* end = nullptr;
  long fd = std::strtol(text, &end, 10);
  if (*end || fd < 0 || fd > 1 << 20)
    throw std::runtime_error(fmt::format("{}={} is not a descriptor", kSecretFdVariable, text));
  Key key;
  // pread: siblings share the open file description, so nobody's offset moves.
  ssize_t got = ::pread(static_cast<int>(fd), key.data(), key.size(), 0);
  int error = errno;
  ::close(static_cast<int>(fd));
  ::unsetenv(kSecretFdVariable);
  if (got != static_cast<ssize_t>(key.size())) {
    throw std::runtime_error(fmt::format("cannot read the job's secret from descriptor {}: {}", fd,
                                         got < 0 ? std::strerror(error) : "short read"));
  }
  return key;
}

}  // namespace bsp::auth
