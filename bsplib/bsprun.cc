// bsplib/bsprun.cc: the launcher. `bsprun -n P [--transport=NAME] [--stats] [--opt=value]
// prog args...` starts P processes of prog on this host, hosts the job's coordinator
// (control plane: handshake, abort, failure detection, statistics), forwards stdin to
// pid 0, and exits with the job's status. Options become BSP_* environment variables,
// which is also how a program run without bsprun picks them up.
#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <linux/close_range.h>
#include <unistd.h>

#include <boost/asio.hpp>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "auth/job_secret.h"
#include "bsplib/control/coordinator.h"
#include "bsplib/options.h"
#include "transport/registry.h"

namespace {

[[noreturn]] void usage(const std::string& problem) {
  if (!problem.empty()) fmt::print(stderr, "bsprun: {}\n", problem);
  fmt::print(stderr,
             "usage: bsprun -n P [options] program [arguments...]\n"
             "  -n P, --nprocs=P        number of processes (default: 1; also -np, -npes, -nprocs)\n");
  for (const bsp::OptionSpec& option : bsp::option_table()) {
    fmt::print(stderr, "  --{:<22}{} [{}; {}{}]\n", std::string(option.name) + "=...", option.help, option.scope,
               bsp::environment_variable(option), *option.default_value ? fmt::format("; default {}", option.default_value) : "");
  }
  fmt::print(stderr, "  --{:<22}{}\n", "netns=PREFIX", "run process i in network namespace PREFIX<i> (tools/cluster.sh)");
  fmt::print(stderr, "  --{:<22}{}\n", "help=markdown", "print the options as the README's table");
  fmt::print(stderr, "transports built in: {}\n", fmt::join(bsp::transport::transport_names(), ", "));
  std::exit(problem.empty() ? 0 : 2);
}

// The BSP_* variable of option --name, or "" when there is no such option.
std::string environment_name(const std::string& name) {
  for (const bsp::OptionSpec& option : bsp::option_table()) {
    if (name == option.name) return bsp::environment_variable(option);
  }
  return {};
}

// The IPv4 address of a network interface, or "" if it has none.
std::string interface_address(const std::string& name) {
  ifaddrs* list = nullptr;
  std::string found;
  if (::getifaddrs(&list) != 0) return found;
  for (ifaddrs* entry = list; entry; entry = entry->ifa_next) {
    if (!entry->ifa_addr || entry->ifa_addr->sa_family != AF_INET) continue;
    char text[INET_ADDRSTRLEN];
    ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(entry->ifa_addr)->sin_addr, text, sizeof text);
    if ((name.empty() && std::string(entry->ifa_name) != "lo") || name == entry->ifa_name) {
      found = text;
      break;
    }
  }
  ::freeifaddrs(list);
  return found;
}

// Moves this thread into network namespace `name` (made by tools/cluster.sh); false if
// there is no such namespace or we may not enter it.
bool switch_namespace(const std::string& name) {
  int fd = ::open(("/var/run/netns/" + name).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool entered = ::setns(fd, CLONE_NEWNET) == 0;
  ::close(fd);
  return entered;
}

// In a child: moves into network namespace `name` and makes its address the one the
// transports bind to.
void enter_namespace(const std::string& name) {
  if (!switch_namespace(name)) {
    fmt::print(stderr, "bsprun: cannot enter network namespace {}: {} (made by tools/cluster.sh? root?)\n", name,
               std::strerror(errno));
    ::_exit(126);
  }
  std::string address = interface_address("");
  if (!address.empty() && !std::getenv("BSP_HOST")) ::setenv("BSP_HOST", address.c_str(), 1);
}

// The coordinator of a job on a namespace cluster listens on host 0 (PREFIX0), the one
// address every host reaches through the cluster's switch; this thread returns home after.
std::unique_ptr<bsp::control::Coordinator> coordinator_on_host_zero(boost::asio::io_context& io,
                                                                    bsp::control::CoordinatorConfig& config,
                                                                    const std::string& prefix) {
  int home = ::open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
  if (home < 0 || !switch_namespace(prefix + "0")) {
    usage(fmt::format("cannot enter network namespace {}0: {} (make a cluster with tools/cluster.sh up N --prefix {}; "
                      "needs root)",
                      prefix, std::strerror(errno), prefix));
  }
  config.listen_address = interface_address("");
  if (config.listen_address.empty()) usage(fmt::format("host {}0 of the cluster has no IPv4 address", prefix));
  auto coordinator = std::make_unique<bsp::control::Coordinator>(io, config);
  if (::setns(home, CLONE_NEWNET) != 0) {
    fmt::print(stderr, "bsprun: cannot return to this host's network namespace: {}\n", std::strerror(errno));
    std::exit(1);
  }
  ::close(home);
  return coordinator;
}

int parse_count(const std::string& text) {
  char* end = nullptr;
  long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end || value < 1 || value > 65535) usage("-n needs a process count from 1 to 65535");
  return static_cast<int>(value);
}

}  // namespace

int main(int argc, char** argv) {
  int processes = 1;
  std::string netns;  // run process i in namespace netns + i
  std::vector<std::pair<std::string, std::string>> settings;  // BSP_* variables to set
  int first = 1;
  for (; first < argc; ++first) {
    std::string arg = argv[first];
    if (arg == "-h" || arg == "--help") usage("");
    if (arg == "--help=markdown") {
      fmt::print("{}", bsp::options_markdown());
      return 0;
    }
    if (arg == "--") {
      ++first;
      break;
    }
    if (arg.rfind("-", 0) != 0) break;
    // -npes and -nprocs are the Oxford toolset's spellings, -np MPI's.
    if (arg == "-n" || arg == "-np" || arg == "--nprocs" || arg == "-npes" || arg == "-nprocs") {
      if (first + 1 >= argc) usage(arg + " needs a value");
      processes = parse_count(argv[++first]);
    } else if (arg.rfind("-n", 0) == 0 && arg.size() > 2 && std::isdigit(static_cast<unsigned char>(arg[2]))) {
      processes = parse_count(arg.substr(2));
    } else if (arg.rfind("--nprocs=", 0) == 0) {
      processes = parse_count(arg.substr(9));
    } else if (arg.rfind("--netns=", 0) == 0) {
      netns = arg.substr(8);
    } else if (arg.rfind("--", 0) == 0) {
      std::string name = arg.substr(2);
      std::string value = "1";
      if (auto eq = name.find('='); eq != std::string::npos) {
        value = name.substr(eq + 1);
        name = name.substr(0, eq);
      }
      std::string variable = environment_name(name);
      if (variable.empty()) usage(fmt::format("unknown option --{}", name));
      settings.emplace_back(variable, value);
    } else {
      usage(fmt::format("unknown option {}", arg));
    }
  }
  if (first >= argc) usage("no program to run");
  for (const auto& [name, value] : settings) ::setenv(name.c_str(), value.c_str(), 1);

  bsp::RunOptions options;
  try {
    options = bsp::options_from_environment();
  } catch (const std::exception& error) {
    fmt::print(stderr, "bsprun: {} (bsprun --help lists the options)\n", error.what());
    return 2;
  }
  auto names = bsp::transport::transport_names();
  if (std::find(names.begin(), names.end(), options.transport) == names.end()) {
    usage(fmt::format("unknown transport '{}'", options.transport));
  }

  std::uint32_t job_id = 0;
  if (::getrandom(&job_id, sizeof job_id, 0) != sizeof job_id || job_id == 0) job_id = static_cast<std::uint32_t>(::getpid());

  boost::asio::io_context io;
  bsp::control::CoordinatorConfig config;
  config.processes = processes;
  config.job_id = job_id;
  config.secret = bsp::auth::make_job_secret();
  config.who = "bsprun";
  config.print_stats = options.stats;
  config.link_timeout_seconds = options.link_timeout_seconds;
  std::unique_ptr<bsp::control::Coordinator> coordinator =
      netns.empty() ? std::make_unique<bsp::control::Coordinator>(io, config)
                    : coordinator_on_host_zero(io, config, netns);

  ::setenv("BSP_CONTROL", fmt::format("{}:{}", config.listen_address, coordinator->port()).c_str(), 1);
  ::setenv("BSP_PROCESSES", std::to_string(processes).c_str(), 1);
  ::setenv("BSP_JOB_ID", std::to_string(job_id).c_str(), 1);
  // The secret goes to the processes through an inherited descriptor, never the
  // environment: only its number is there.
  int secret_fd = -1;
  try {
    secret_fd = bsp::auth::secret_descriptor(config.secret);
  } catch (const std::exception& error) {
    fmt::print(stderr, "bsprun: {}\n", error.what());
    return 1;
  }
  ::setenv(bsp::auth::kSecretFdVariable, std::to_string(secret_fd).c_str(), 1);
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t launcher = ::getpid();
  for (int pid = 0; pid < processes; ++pid) {
    pid_t child = ::fork();
    if (child < 0) {
      std::perror("bsprun: fork");
      return 1;
    }
    if (child == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the launcher
      if (::getppid() != launcher) ::_exit(1);  // the launcher died before the line above
      ::setenv("BSP_PID", std::to_string(pid).c_str(), 1);
      if (!netns.empty()) enter_namespace(netns + std::to_string(pid));
      if (pid != 0) {
        int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (null >= 0) ::dup2(null, STDIN_FILENO);
      }
      // The program gets stdin, stdout, stderr and the job's secret, nothing of the
      // launcher's (its event loop, timers, the coordinator's listening socket).
      ::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
      ::fcntl(secret_fd, F_SETFD, 0);
      ::execvp(argv[first], argv + first);
      fmt::print(stderr, "bsprun: cannot run {}: {}\n", argv[first], std::strerror(errno));
      ::_exit(127);
    }
    coordinator->set_os_pid(pid, child);
  }
  ::signal(SIGPIPE, SIG_IGN);
  bsp::control::Coordinator::run(io, config.who);
  return coordinator->exit_status();
}
