// recovery/runnable_census.cc: the job's runnable processes against the machine's
// (runnable_census.h).
#include "recovery/runnable_census.h"

#include <fcntl.h>
#include <unistd.h>

#include <charconv>
#include <string>
#include <utility>

namespace bsp::recovery {
namespace {

// Reads a /proc file from its start into buffer; the text read, empty on failure.
std::string_view read_at_start(int fd, std::span<char> buffer) {
  const ssize_t got = ::pread(fd, buffer.data(), buffer.size(), 0);
  return got > 0 ? std::string_view(buffer.data(), static_cast<std::size_t>(got)) : std::string_view();
}

transport::FileDescriptor open_stat(pid_t pid) {
  const std::string path = "/proc/" + std::to_string(pid) + "/stat";
  return transport::FileDescriptor(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
}

// The next space-separated field of text from position at (moved past it).
std::string_view next_field(std::string_view text, std::size_t& at) {
  while (at < text.size() && text[at] == ' ') ++at;
  const std::size_t begin = at;
  while (at < text.size() && text[at] != ' ' && text[at] != '\n') ++at;
  return text.substr(begin, at - begin);
}

constexpr std::size_t kStatBytes = 1024;  // a stat line is ~300 bytes; the name at most 64

// Reads and parses an open /proc/PID/stat (false: unreadable, as once its process is gone).
bool read_process_stat(const transport::FileDescriptor& stat, char& state, std::uint64_t& start_ticks) {
  char buffer[kStatBytes];
  return stat && parse_process_stat(read_at_start(stat.get(), buffer), state, start_ticks);
}

}  // namespace

bool parse_process_stat(std::string_view text, char& state, std::uint64_t& start_ticks) {
  const std::size_t close = text.rfind(')');
  if (close == std::string_view::npos) return false;
  std::size_t at = close + 1;
  const std::string_view state_field = next_field(text, at);
  if (state_field.size() != 1) return false;
  // Fields 4..21 (ppid .. itrealvalue) come between the state and the start time.
  for (int skipped = 4; skipped <= 21; ++skipped) {
    if (next_field(text, at).empty()) return false;
  }
  const std::string_view start = next_field(text, at);
  std::uint64_t ticks = 0;
  const auto [end, error] = std::from_chars(start.data(), start.data() + start.size(), ticks);
  if (error != std::errc() || end != start.data() + start.size() || start.empty()) return false;
  state = state_field[0];
  start_ticks = ticks;
  return true;
}

int runnable_tasks_in(std::string_view loadavg) {
  std::size_t at = 0;
  for (int skipped = 0; skipped < 3; ++skipped) {
    if (next_field(loadavg, at).empty()) return -1;
  }
  const std::string_view tasks = next_field(loadavg, at);
  int running = -1;
  const auto [end, error] = std::from_chars(tasks.data(), tasks.data() + tasks.size(), running);
  if (error != std::errc() || end == tasks.data() + tasks.size() || *end != '/') return -1;
  return running;
}

ProcessIdentity own_identity() {
  ProcessIdentity self{::getpid(), 0};
  char state = 0;
  std::uint64_t ticks = 0;
  if (read_process_stat(open_stat(self.pid), state, ticks)) self.start_ticks = ticks;
  return self;
}

RunnableCensus::RunnableCensus(std::span<const ProcessIdentity> job_here)
    : loadavg_(::open("/proc/loadavg", O_RDONLY | O_CLOEXEC)) {
  complete_ = loadavg_ && !job_here.empty();
  for (const ProcessIdentity& process : job_here) {
    char state = 0;
    std::uint64_t ticks = 0;
    transport::FileDescriptor stat = process.pid > 0 && process.start_ticks != 0 ? open_stat(process.pid)
                                                                                 : transport::FileDescriptor();
    complete_ = complete_ && read_process_stat(stat, state, ticks) && ticks == process.start_ticks;
    if (!complete_) break;
    stats_.push_back(std::move(stat));
  }
}

int RunnableCensus::job_runnable() const {
  if (!complete_) return -1;
  int runnable = 0;
  for (const transport::FileDescriptor& stat : stats_) {
    char state = 0;
    std::uint64_t ticks = 0;
    // A process that ended leaves a descriptor that reads nothing: the census no longer holds.
    if (!read_process_stat(stat, state, ticks)) return -1;
    if (state == 'R') ++runnable;
  }
  return runnable;
}

bool RunnableCensus::only_the_job_runs() const {
  if (!complete_) return false;
  ++checks_;
  char buffer[128];
  const int machine = runnable_tasks_in(read_at_start(loadavg_.get(), buffer));
  if (machine < 1) return false;
  const int job = job_runnable();
  const bool only_the_job = job >= 1 && machine <= job;
  said_yes_ += only_the_job ? 1 : 0;
  return only_the_job;
}

}  // namespace bsp::recovery
