// bsplib/launch/start_report.cc: the start pipe between a launcher and its processes.
#include "bsplib/launch/start_report.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <system_error>

namespace bsp::launch {

namespace {
constexpr char kBegan = 'B';
constexpr char kExecFailed = 'E';
constexpr std::size_t kMostError = 1024;  // bytes of an exec error kept
}  // namespace

StartPipe make_start_pipe() {
  int ends[2];
  if (::pipe2(ends, O_CLOEXEC) != 0) throw std::system_error(errno, std::generic_category(), "start pipe");
  return {ends[0], ends[1]};
}

void inherit_start_pipe(int write_fd) {
  ::fcntl(write_fd, F_SETFD, 0);
  char number[16];
  std::snprintf(number, sizeof number, "%d", write_fd);
  ::setenv(kStartFdVariable, number, 1);
}

void report_exec_failure(int write_fd, const char* what) {
  std::size_t length = std::min(std::strlen(what), kMostError);
  char marker = kExecFailed;
  [[maybe_unused]] ssize_t ignored = ::write(write_fd, &marker, 1);
  ignored = ::write(write_fd, what, length);
}

StartReport read_start_report(int read_fd) {
  StartReport report;
  if (read_fd < 0) return report;
  ::fcntl(read_fd, F_SETFL, ::fcntl(read_fd, F_GETFL) | O_NONBLOCK);
  std::string said;
  char chunk[512];
  for (;;) {
    ssize_t got = ::read(read_fd, chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0 || said.size() > kMostError) break;
    said.append(chunk, static_cast<std::size_t>(got));
  }
  ::close(read_fd);
  // Only the first byte decides: the process writes nothing else (anything after 'B' came
  // from a program misusing the descriptor and is ignored).
  if (!said.empty() && said[0] == kBegan) report.began = true;
  if (!said.empty() && said[0] == kExecFailed) {
    // Printed by the coordinator: whatever came through the pipe, only printable text.
    for (char c : said.substr(1, kMostError)) {
      report.exec_error += (c >= 0x20 && c < 0x7f) ? c : '?';
    }
    if (report.exec_error.empty()) report.exec_error = "exec failed";
  }
  return report;
}

void announce_begin() {
  const char* text = std::getenv(kStartFdVariable);
  if (!text) return;
  char* end = nullptr;
  long fd = std::strtol(text, &end, 10);
  ::unsetenv(kStartFdVariable);
  if (end == text || *end || fd < 3 || fd > 1 << 24) return;
  // Only a pipe is ours to write: a number that names something else (the variable
  // inherited by a program that closed the pipe and reused the number) is left alone.
  struct stat what {};
  int flags = ::fcntl(static_cast<int>(fd), F_GETFL);
  if (flags < 0 || (flags & O_ACCMODE) != O_WRONLY || ::fstat(static_cast<int>(fd), &what) != 0 ||
      !S_ISFIFO(what.st_mode)) {
    return;
  }
  char marker = kBegan;
  [[maybe_unused]] ssize_t ignored = ::write(static_cast<int>(fd), &marker, 1);
  ::close(static_cast<int>(fd));
}

}  // namespace bsp::launch
