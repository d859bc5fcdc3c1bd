// transport/shm/host_identity.cc: the host key (host_identity.h).
#include "transport/shm/host_identity.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <fstream>
#include <stdexcept>

namespace bsp::transport::shm {
namespace {

unsigned long namespace_inode(const char* path) {
  struct stat info {};
  if (::stat(path, &info) != 0) throw std::runtime_error(fmt::format("shm transport: cannot read {}", path));
  return static_cast<unsigned long>(info.st_ino);
}

}  // namespace

std::string host_key() {
  std::ifstream file("/proc/sys/kernel/random/boot_id");
  std::string boot_id, compact;
  std::getline(file, boot_id);
  for (char c : boot_id) {
    if (c != '-') compact += c;
  }
  if (compact.empty()) throw std::runtime_error("shm transport: cannot read /proc/sys/kernel/random/boot_id");
  return fmt::format("{}.{:x}.{:x}", compact, namespace_inode("/proc/self/ns/net"),
                     namespace_inode("/proc/self/ns/pid"));
}

}  // namespace bsp::transport::shm
