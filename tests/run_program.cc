// tests/run_program.cc: subprocess runner with deadline and captured output.
#include "tests/run_program.h"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <regex>
#include <sstream>

namespace bsp::testing {

double calibrated_bound(double idle_seconds, const ProgramResult& reference, double multiple) {
  double bound = std::max(idle_seconds, multiple * reference.seconds);
  std::printf("calibrated bound: %.2f s (idle %.2f s; reference run %.2f s x %g)\n", bound, idle_seconds,
              reference.seconds, multiple);
  std::fflush(stdout);
  return bound;
}

ProgramResult run_program(const std::vector<std::string>& argv, std::chrono::milliseconds deadline,
                          const std::string& input, const std::map<std::string, std::string>& environment) {
  ProgramResult result;
  int out_pipe[2], err_pipe[2], in_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) || ::pipe2(err_pipe, O_CLOEXEC) || ::pipe2(in_pipe, O_CLOEXEC)) return result;
  auto started = std::chrono::steady_clock::now();
  pid_t child = ::fork();
  if (child == 0) {
    ::setpgid(0, 0);
    ::dup2(in_pipe[0], 0);
    ::dup2(out_pipe[1], 1);
    ::dup2(err_pipe[1], 2);
    for (const auto& [name, value] : environment) ::setenv(name.c_str(), value.c_str(), 1);
    std::vector<char*> args;
    for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    std::fprintf(stderr, "cannot run %s: %s\n", args[0], std::strerror(errno));
    ::_exit(127);
  }
  ::setpgid(child, child);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  ::close(in_pipe[0]);
  if (!input.empty()) {
    ssize_t ignored = ::write(in_pipe[1], input.data(), input.size());
    (void)ignored;
  }
  ::close(in_pipe[1]);
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_pipes = 2;
  while (open_pipes > 0) {
    auto left = deadline -
                std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
    if (left.count() <= 0) {
      result.timed_out = true;
      ::kill(-child, SIGKILL);
      break;
    }
    if (::poll(fds, 2, static_cast<int>(left.count())) <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char chunk[65536];
      ssize_t got = ::read(fds[i].fd, chunk, sizeof chunk);
      if (got <= 0) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_pipes;
      } else {
        (i == 0 ? result.out : result.err).append(chunk, static_cast<std::size_t>(got));
      }
    }
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  ::kill(-child, SIGKILL);  // anything left in the group
  for (pollfd& fd : fds) {
    if (fd.fd >= 0) ::close(fd.fd);
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

std::string absolute(const std::string& path) {
  char resolved[PATH_MAX];
  return ::realpath(path.c_str(), resolved) ? std::string(resolved) : path;
}

std::vector<long> stats_per_process(const ProgramResult& result, const std::string& key) {
  std::vector<long> values;
  const std::regex line("^  pid +[0-9]+ .*\\b" + key + "=([0-9]+)");
  std::istringstream text(result.err);
  for (std::string one; std::getline(text, one);) {
    std::smatch match;
    if (std::regex_search(one, match, line)) values.push_back(std::stol(match[1]));
  }
  return values;
}

std::string describe(const ProgramResult& result) {
  return "exit " + std::to_string(result.exit_code) + (result.timed_out ? " (timed out)" : "") + "\nstdout:\n" +
         result.out + "\nstderr:\n" + result.err;
}

double stats_total(const ProgramResult& result, const std::string& key) {
  auto total = result.err.find("  total ");
  if (total == std::string::npos) return -1;
  auto at = result.err.find(" " + key + "=", total);
  if (at == std::string::npos) return -1;
  return std::strtod(result.err.c_str() + at + key.size() + 2, nullptr);
}

int count_occurrences(const std::string& haystack, const std::string& needle) {
  int count = 0;
  for (std::size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) ++count;
  return count;
}

std::vector<std::string> available_transports(const std::string& bsprun) {
  ProgramResult help = run_program({bsprun, "--help"}, std::chrono::seconds(10));
  std::vector<std::string> names;
  auto at = help.err.find("transports built in: ");
  if (at == std::string::npos) return names;
  std::istringstream list(help.err.substr(at + 21, help.err.find('\n', at) - at - 21));
  std::string name;
  while (std::getline(list, name, ',')) {
    name.erase(0, name.find_first_not_of(' '));
    names.push_back(name);
  }
  return names;
}

bool transport_usable(const std::string& bsprun, const std::string& transport) {
  static const std::vector<std::string> names = available_transports(bsprun);
  if (transport.ends_with("nic") && ::geteuid() != 0) return false;
  return std::find(names.begin(), names.end(), transport) != names.end();
}

}  // namespace bsp::testing
