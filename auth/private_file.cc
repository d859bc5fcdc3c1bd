// auth/private_file.cc: see private_file.h.
#include "auth/private_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace bsp::auth {
namespace {

std::string what_is_there(const std::string& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) return "it exists";
  if (S_ISLNK(info.st_mode)) return "a symbolic link";
  if (S_ISDIR(info.st_mode)) return "a directory";
  if (!S_ISREG(info.st_mode)) return "not a regular file";
  return info.st_uid == ::geteuid() ? "a file of this user" : fmt::format("a file of user id {}", info.st_uid);
}

}  // namespace

int create_private_file(const std::string& path, bool overwrite, std::string& error) {
  constexpr int kFlags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
  int fd = ::open(path.c_str(), kFlags, 0600);
  if (fd < 0 && errno == EEXIST) {
    const std::string there = what_is_there(path);
    if (!overwrite) {
      error = fmt::format("it exists ({}); refusing to write over it ({})", there, kOverwriteHint);
      return -1;
    }
    struct stat info {};
    if (::lstat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
      error = fmt::format("{} is a directory", path);
      return -1;
    }
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
      error = fmt::format("cannot remove the existing {} ({}) to write it anew: {}", path, there, std::strerror(errno));
      return -1;
    }
    fd = ::open(path.c_str(), kFlags, 0600);
    if (fd < 0 && errno == EEXIST) {
      error = fmt::format("{} was made again by someone else while it was being replaced", path);
      return -1;
    }
  }
  if (fd < 0) {
    error = std::strerror(errno);
    return -1;
  }
  ::fchmod(fd, 0600);  // exactly: the umask may have taken the owner's write away
  return fd;
}

bool publish_private_file(const std::string& from, const std::string& to, bool overwrite, std::string& error) {
  // rename() replaces the name `to` itself (a link there is replaced, not followed).
  int done = overwrite ? ::rename(from.c_str(), to.c_str())
                       : ::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE);
  if (done == 0) return true;
  error = errno == EEXIST
              ? fmt::format("{} exists ({}); refusing to write over it ({})", to, what_is_there(to), kOverwriteHint)
              : fmt::format("cannot rename {} to {}: {}", from, to, std::strerror(errno));
  return false;
}

}  // namespace bsp::auth
