// tests/transport/veth_segment.cc: the namespace, bridge and veth pairs of VethSegment.
#include "tests/transport/veth_segment.h"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "tests/run_program.h"

namespace bsp::transport::testing {
namespace {

using namespace std::chrono_literals;

std::string& reason() {
  static std::string text;
  return text;
}

int open_current_namespace() { return ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC); }

// Runs `ip ARGS` in the calling thread's namespace; "" or what went wrong.
std::string ip(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"ip"};
  argv.insert(argv.end(), args.begin(), args.end());
  bsp::testing::ProgramResult result = bsp::testing::run_program(argv, 30s);
  if (result.exit_code == 0) return "";
  std::string command;
  for (const std::string& arg : argv) command += (command.empty() ? "" : " ") + arg;
  return command + ": " + bsp::testing::describe(result);
}

// Builds the segment in a new namespace entered by this thread, then comes home; the
// namespace's descriptor, or -1 with reason() set.
int build(int ports) {
  if (::geteuid() != 0) {
    reason() = "needs root (a network namespace, veth interfaces, XDP programs)";
    return -1;
  }
  int home = open_current_namespace();
  if (home < 0) {
    reason() = std::string("cannot open this thread's network namespace: ") + std::strerror(errno);
    return -1;
  }
  if (::unshare(CLONE_NEWNET) != 0) {
    reason() = std::string("unshare(CLONE_NEWNET): ") + std::strerror(errno);
    ::close(home);
    return -1;
  }
  int segment = open_current_namespace();
  std::string error = segment < 0 ? std::string("opening the new namespace: ") + std::strerror(errno) : "";
  std::vector<std::vector<std::string>> steps = {
      {"link", "set", "lo", "up"}, {"link", "add", "xbr", "type", "bridge"}, {"link", "set", "xbr", "up"}};
  for (int port = 0; port < ports; ++port) {
    std::string name = "x" + std::to_string(port), peer = "xp" + std::to_string(port);
    steps.push_back({"link", "add", name, "type", "veth", "peer", "name", peer});
    steps.push_back({"link", "set", peer, "master", "xbr"});
    steps.push_back({"link", "set", peer, "up"});
    steps.push_back({"link", "set", name, "up"});
  }
  for (const auto& step : steps) {
    if (!error.empty()) break;
    error = ip(step);
  }
  if (::setns(home, CLONE_NEWNET) != 0) {
    // The thread cannot go back: nothing else in this process could work as expected.
    throw std::runtime_error(std::string("setns back to the test's namespace: ") + std::strerror(errno));
  }
  ::close(home);
  if (!error.empty()) {
    reason() = "cannot build the veth segment: " + error;
    if (segment >= 0) ::close(segment);
    return -1;
  }
  return segment;
}

}  // namespace

VethSegment* VethSegment::get(int ports) {
  static VethSegment* segment = [ports]() -> VethSegment* {
    int fd = build(ports);
    return fd < 0 ? nullptr : new VethSegment(ports, fd);
  }();
  return segment;
}

const std::string& VethSegment::why() { return reason(); }

VethSegment::Entered::Entered(const VethSegment& segment) : home_(open_current_namespace()) {
  if (home_ < 0 || ::setns(segment.namespace_fd_, CLONE_NEWNET) != 0) {
    throw std::runtime_error(std::string("entering the veth segment's namespace: ") + std::strerror(errno));
  }
}

VethSegment::Entered::~Entered() {
  if (::setns(home_, CLONE_NEWNET) != 0) std::abort();  // a thread stranded in the test namespace
  ::close(home_);
}

}  // namespace bsp::transport::testing
