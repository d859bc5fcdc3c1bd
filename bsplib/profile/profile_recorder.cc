// bsplib/profile/profile_recorder.cc: per-superstep records written as the program runs
// (buffered, 64 KiB at a time), the load map at bsp_end, and pid 0's join of the parts.
#include "bsplib/profile/profile_recorder.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auth/private_file.h"

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <stdexcept>

namespace bsp::profile {
namespace {

constexpr std::size_t kFlushAt = 64 * 1024;

std::string part_name(const std::string& path, int pid) { return fmt::format("{}.part{}", path, pid); }

std::string program_path() {
  char buffer[4096];
  ssize_t n = ::readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  return n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : std::string();
}

bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

WireCounters wire_of(const recovery::ChannelStats& s) {
  return WireCounters{s.bytes_sent,      s.bytes_received,     s.data_sent,    s.data_received,
                      s.retransmissions, s.explicit_acks_sent, s.acks_received};
}

WireCounters minus(const WireCounters& a, const WireCounters& b) {
  return WireCounters{a.bytes_sent - b.bytes_sent,           a.bytes_received - b.bytes_received,
                      a.frames_sent - b.frames_sent,         a.frames_received - b.frames_received,
                      a.retransmissions - b.retransmissions, a.acks_sent - b.acks_sent,
                      a.acks_received - b.acks_received};
}

// Executable mappings with a file behind them, from /proc/self/maps.
std::vector<Mapping> executable_mappings() {
  std::vector<Mapping> maps;
  std::ifstream in("/proc/self/maps");
  std::string line;
  while (std::getline(in, line)) {
    unsigned long long start = 0, end = 0, offset = 0;
    char perms[8] = {};
    int path_at = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perms, &offset, &path_at) < 4) {
      continue;
    }
    if (perms[2] != 'x' || path_at <= 0 || static_cast<std::size_t>(path_at) >= line.size()) continue;
    std::string path = line.substr(static_cast<std::size_t>(path_at));
    if (path.empty() || path[0] != '/') continue;  // [vdso], anonymous
    maps.push_back(Mapping{start, end, offset, path});
  }
  return maps;
}

// A part as its process wrote it: a regular file of this user, not a link (a name in a
// directory others can write to may have been swapped since). False when there is none.
bool read_own_part(const std::string& part, std::string& bytes) {
  int fd = ::open(part.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat info {};
  bool own = ::fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && info.st_uid == ::geteuid();
  char buffer[1 << 16];
  for (ssize_t n; own && (n = ::read(fd, buffer, sizeof buffer)) != 0;) {
    if (n < 0) {
      if (errno == EINTR) continue;
      own = false;
      break;
    }
    bytes.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return own;
}

}  // namespace

std::uint64_t now_ns() {
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<std::uint64_t>(t.tv_sec) * 1000000000u + static_cast<std::uint64_t>(t.tv_nsec);
}

std::string expand_path(const std::string& pattern, const std::string& program, const std::string& transport) {
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size()) {
      char c = pattern[i + 1];
      if (c == 'e' || c == 't' || c == '%') {
        out += c == 'e' ? program : c == 't' ? transport : "%";
        ++i;
        continue;
      }
    }
    out += pattern[i];
  }
  return out;
}

Recorder::Recorder(const std::string& path, int pid, int nprocs, const std::string& transport,
                   const recovery::Channel& channel, bool overwrite)
    : overwrite_(overwrite), pid_(pid), nprocs_(nprocs), channel_(channel), peers_(static_cast<std::size_t>(nprocs)) {
  std::string program = program_path();
  std::string name = program.substr(program.rfind('/') + 1);
  path_ = expand_path(path, name, transport);
  struct stat there {};
  if (pid == 0 && !overwrite && ::lstat(path_.c_str(), &there) == 0) {
    // Said now, not after the whole run when the parts are joined.
    throw std::runtime_error(
        fmt::format("--profile: {} exists; refusing to write over it ({})", path_, auth::kOverwriteHint));
  }
  std::string part = part_name(path_, pid);
  std::string error;
  fd_ = auth::create_private_file(part, overwrite, error);
  if (fd_ < 0) throw std::runtime_error(fmt::format("--profile: cannot write {}: {}", part, error));
  touched_.reserve(static_cast<std::size_t>(nprocs));
  buffer_.reserve(kFlushAt + 4096);
  append_magic(buffer_);
  previous_end_ns_ = now_ns();
  append_header(buffer_, pid, nprocs, previous_end_ns_, transport, program);
  last_wire_ = wire_of(channel_.stats());
}

Recorder::~Recorder() {
  if (fd_ >= 0) ::close(fd_);
}

void Recorder::sync_started(const void* call_site, bool final) {
  step_.sync_start_ns = now_ns();
  step_.call_site = reinterpret_cast<std::uintptr_t>(call_site);
  step_.flags = final ? kFinalStep : 0;
}

void Recorder::sync_ended() {
  step_.sync_end_ns = now_ns();
  step_.index = steps_++;
  WireCounters wire = wire_of(channel_.stats());
  step_.wire = minus(wire, last_wire_);
  last_wire_ = wire;
  step_.peers.clear();
  for (int pid : touched_) {
    PeerTraffic& p = peers_[static_cast<std::size_t>(pid)];
    p.peer = static_cast<std::uint32_t>(pid);
    step_.peers.push_back(p);
    p = PeerTraffic{};
  }
  touched_.clear();
  append_step(buffer_, step_);
  previous_end_ns_ = step_.sync_end_ns;
  step_.puts = step_.gets = step_.sends = 0;
  tagsize_ = next_tagsize_;
  if (buffer_.size() >= kFlushAt) flush(false);
}

void Recorder::flush(bool) {
  if (fd_ < 0 || buffer_.empty()) return;
  if (!write_all(fd_, buffer_.data(), buffer_.size())) {
    std::fprintf(stderr, "bsplib: pid %d: --profile: writing %s failed: %s; profiling stops\n", pid_,
                 part_name(path_, pid_).c_str(), std::strerror(errno));
    ::close(fd_);
    fd_ = -1;
  }
  buffer_.clear();
}

void Recorder::finish() {
  for (const Mapping& mapping : executable_mappings()) append_mapping(buffer_, mapping);
  append_end(buffer_, now_ns(), steps_);
  flush(true);
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

std::string Recorder::join_parts() const {
  std::string problems;
  std::string temporary = path_ + ".joining";
  std::string error;
  // The temporary is ours to replace (a leftover of a run that died while joining); a
  // link planted there is removed, never followed.
  int out = auth::create_private_file(temporary, true, error);
  if (out < 0) return fmt::format("cannot write {}: {}", temporary, error);
  int missing = 0;
  for (int pid = 0; pid < nprocs_; ++pid) {
    std::string part = part_name(path_, pid);
    std::string bytes;
    if (!read_own_part(part, bytes)) {
      ++missing;
      continue;
    }
    if (!write_all(out, bytes.data(), bytes.size())) {
      problems = fmt::format("writing {} failed: {}", temporary, std::strerror(errno));
      break;
    }
    ::unlink(part.c_str());
  }
  ::close(out);
  if (!problems.empty()) return problems;
  if (!auth::publish_private_file(temporary, path_, overwrite_, error)) {
    ::unlink(temporary.c_str());
    return error;
  }
  if (missing > 0) {
    return fmt::format(
        "{} of {} processes' parts ({}.partN) were not found here (written on another host?); {} "
        "holds the others; append theirs to it",
        missing, nprocs_, path_, path_);
  }
  return {};
}

}  // namespace bsp::profile
