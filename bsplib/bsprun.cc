// bsplib/bsprun.cc: the launcher. `bsprun -n P [--transport=NAME] [--stats] [--opt=value]
// prog args...` starts P processes of prog on this host, or across hosts (--hosts,
// --hostfile: through a remote shell and bsprun's agent there, launch/remote_hosts.h),
// hosts the job's coordinator (control plane: handshake, abort, failure detection,
// statistics), forwards stdin to pid 0 and the processes' output to the terminal
// (--tag-output prefixes each line with its pid), and exits with the job's status.
// Options become BSP_* environment variables, which is also how a program run without
// bsprun picks them up. `bsprun --agent` is the agent the remote shell starts. bsprun
// raises its soft descriptor limit to the hard one (inherited by the processes): the
// coordinator holds a connection per process, and tcp's connection limit follows it.
#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <linux/close_range.h>
#include <unistd.h>

#include <boost/asio.hpp>
#include <netdb.h>
#include <algorithm>
#include <cctype>
#include <sstream>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "auth/job_secret.h"
#include "bsplib/control/coordinator.h"
#include "bsplib/launch/agent.h"
#include "bsplib/launch/host_addresses.h"
#include "bsplib/launch/host_list.h"
#include "bsplib/launch/output_forwarder.h"
#include "bsplib/launch/remote_hosts.h"
#include "bsplib/launch/start_report.h"
#include "bsplib/options.h"
#include "transport/registry.h"

namespace {

[[noreturn]] void usage(const std::string& problem) {
  if (!problem.empty()) fmt::print(stderr, "bsprun: {}\n", problem);
  fmt::print(stderr, "usage: bsprun -n P [options] program [arguments...]\n");
  // Both tables also make bsprun(1)'s OPTIONS section (--help=man): one source for both.
  std::size_t width = 0;
  for (const bsp::LauncherOption& option : bsp::launcher_option_table())
    width = std::max(width, std::strlen(option.spelling));
  for (const bsp::OptionSpec& option : bsp::option_table()) width = std::max(width, std::strlen(option.name) + 6);
  for (const bsp::LauncherOption& option : bsp::launcher_option_table()) {
    fmt::print(stderr, "  {:<{}}{}\n", option.spelling, width + 2, option.help);
  }
  for (const bsp::OptionSpec& option : bsp::option_table()) {
    fmt::print(stderr, "  {:<{}}{} [{}; {}{}]\n", fmt::format("--{}=...", option.name), width + 2, option.help,
               option.scope, bsp::environment_variable(option),
               *option.default_value ? fmt::format("; default {}", option.default_value) : "");
  }
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
  std::string address = bsp::launch::interface_address("");
  if (!address.empty() && !std::getenv("BSP_HOST")) ::setenv("BSP_HOST", address.c_str(), 1);
}

// The coordinator of a job on a namespace cluster listens on host 0 (PREFIX0), the one
// address every host reaches through the cluster's switch; this thread returns home after.
std::unique_ptr<bsp::control::Coordinator> coordinator_on_host_zero(boost::asio::io_context& io,
                                                                    bsp::control::CoordinatorConfig& config,
                                                                    const std::string& prefix) {
  int home = ::open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
  if (home < 0 || !switch_namespace(prefix + "0")) {
    usage(
        fmt::format("cannot enter network namespace {}0: {} (make a cluster with tools/cluster.sh up N --prefix {}; "
                    "needs root)",
                    prefix, std::strerror(errno), prefix));
  }
  config.listen_address = bsp::launch::interface_address("");
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

std::vector<std::string> split_words(const std::string& text) {
  std::vector<std::string> words;
  std::stringstream stream(text);
  std::string word;
  while (stream >> word) words.push_back(word);
  return words;
}

// The address of this host's interface toward `host` (the route the kernel would take):
// what this host's processes give as theirs when the job spans hosts.
std::string address_toward(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), "9", &hints, &found) != 0) return {};
  std::string address;
  int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_in local{};
  socklen_t length = sizeof local;
  if (fd >= 0 && ::connect(fd, found->ai_addr, found->ai_addrlen) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &length) == 0) {
    char text[INET_ADDRSTRLEN];
    ::inet_ntop(AF_INET, &local.sin_addr, text, sizeof text);
    address = text;
  }
  if (fd >= 0) ::close(fd);
  ::freeaddrinfo(found);
  return address;
}

// The BSP_* settings remote processes get: the options, not what is per process or
// per host (the coordinator's address, pid, secret; --host names an address of this host).
std::vector<std::string> forwarded_settings() {
  static const char* const kPerProcess[] = {
      "BSP_CONTROL", "BSP_PID", "BSP_PROCESSES", "BSP_JOB_ID", bsp::auth::kSecretFdVariable, "BSP_HOST"};
  std::vector<std::string> settings;
  for (char** variable = environ; *variable; ++variable) {
    std::string entry = *variable;
    if (entry.rfind("BSP_", 0) != 0) continue;
    std::string name = entry.substr(0, entry.find('='));
    if (std::find(std::begin(kPerProcess), std::end(kPerProcess), name) == std::end(kPerProcess)) {
      settings.push_back(entry);
    }
  }
  return settings;
}

std::string this_executable() {
  char path[4096];
  ssize_t length = ::readlink("/proc/self/exe", path, sizeof path - 1);
  if (length <= 0) return "bsprun";
  return std::string(path, static_cast<std::size_t>(length));
}

std::string working_directory() {
  char path[4096];
  return ::getcwd(path, sizeof path) ? std::string(path) : std::string();
}

}  // namespace

namespace {

// The soft RLIMIT_NOFILE up to the hard one: many processes mean many descriptors (the
// coordinator's sessions, tcp's connections; the children inherit the limit).
void raise_descriptor_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &limit);  // best effort: the old limit still works for small jobs
  }
}

// Without -n, as BSPonMPI's launcher (mpirun) and a direct start do: one process per core
// this process may run on (its CPU affinity, so taskset and cgroups count), or with
// --hosts/--hostfile one per slot of every host.
int default_process_count(const std::vector<bsp::launch::Host>& hosts) {
  long count = 0;
  if (!hosts.empty()) {
    for (const bsp::launch::Host& host : hosts) count += host.slots;
  } else {
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    count = ::sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) : 0;
    if (count <= 0) count = static_cast<long>(std::thread::hardware_concurrency());
  }
  return static_cast<int>(std::clamp(count, 1L, 65535L));
}

}  // namespace

int main(int argc, char** argv) {
  raise_descriptor_limit();
  if (argc == 2 && std::string(argv[1]) == "--agent") return bsp::launch::run_agent();
  int processes = 0;  // 0: not given, default_process_count() after the options
  std::string netns;  // run process i in namespace netns + i
  std::vector<bsp::launch::Host> hosts;
  std::string rsh = "ssh -x -o BatchMode=yes";
  bool tag_output = false;
  std::vector<std::pair<std::string, std::string>> settings;  // BSP_* variables to set
  int first = 1;
  try {
    for (; first < argc; ++first) {
      std::string arg = argv[first];
      if (arg == "-h" || arg == "--help") usage("");
      if (arg == "--help=markdown" || arg == "--help=man") {
        fmt::print("{}", arg == "--help=man" ? bsp::options_man() : bsp::options_markdown());
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
      } else if (arg.rfind("--hosts=", 0) == 0) {
        hosts = bsp::launch::parse_host_list(arg.substr(8));
      } else if (arg.rfind("--hostfile=", 0) == 0) {
        hosts = bsp::launch::read_hostfile(arg.substr(11));
      } else if (arg.rfind("--rsh=", 0) == 0) {
        rsh = arg.substr(6);
        if (split_words(rsh).empty()) usage("--rsh needs a command");
      } else if (arg == "--tag-output") {
        tag_output = true;
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
  } catch (const std::invalid_argument& error) {
    usage(error.what());
  }
  if (first >= argc) usage("no program to run");
  if (processes == 0) processes = default_process_count(hosts);
  if (!netns.empty() && !hosts.empty()) usage("--netns and --hosts/--hostfile do not mix: choose one way of placing");
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

  // Where each pid runs: here, unless the hosts say otherwise.
  std::vector<bsp::launch::Placement> remote;
  std::vector<bool> here(static_cast<std::size_t>(processes), true);
  std::vector<std::string> host_of(static_cast<std::size_t>(processes));
  if (!hosts.empty()) {
    try {
      for (bsp::launch::Placement& placement : bsp::launch::place(processes, hosts)) {
        if (bsp::launch::is_this_host(placement.host.name) && placement.host.iface.empty()) continue;
        for (int pid : placement.pids) {
          here[static_cast<std::size_t>(pid)] = false;
          host_of[static_cast<std::size_t>(pid)] = placement.host.name;
        }
        remote.push_back(std::move(placement));
      }
    } catch (const std::invalid_argument& error) {
      usage(error.what());
    }
  }

  std::uint32_t job_id = 0;
  if (::getrandom(&job_id, sizeof job_id, 0) != sizeof job_id || job_id == 0)
    job_id = static_cast<std::uint32_t>(::getpid());

  boost::asio::io_context io;
  bsp::launch::OutputForwarder output(tag_output);
  bsp::launch::RemoteHosts remote_hosts(io, split_words(rsh), this_executable(), output);
  bsp::control::CoordinatorConfig config;
  config.processes = processes;
  config.job_id = job_id;
  config.secret = bsp::auth::make_job_secret();
  config.who = "bsprun";
  config.print_stats = options.stats;
  config.link_timeout_seconds = options.link_timeout_seconds;
  config.start_timeout_seconds = options.start_timeout_seconds;
  std::string control_address = config.listen_address;
  if (!remote.empty()) {
    // Processes on other hosts connect back: listen on every interface (a session must
    // prove the job's secret before it is heard), and give this host's processes the
    // address toward the others, so the addresses they publish reach them.
    config.listen_address = "0.0.0.0";
    config.hosts = host_of;
    config.kill_remote = [&remote_hosts] { remote_hosts.kill_all(); };
    control_address = address_toward(remote.front().host.name);
    if (control_address.empty()) usage(fmt::format("no route from this host to {}", remote.front().host.name));
  }
  std::unique_ptr<bsp::control::Coordinator> coordinator = netns.empty()
                                                               ? std::make_unique<bsp::control::Coordinator>(io, config)
                                                               : coordinator_on_host_zero(io, config, netns);
  if (!netns.empty()) control_address = config.listen_address;
  remote_hosts.attach(*coordinator);

  ::setenv("BSP_CONTROL", fmt::format("{}:{}", control_address, coordinator->port()).c_str(), 1);
  ::setenv("BSP_PROCESSES", std::to_string(processes).c_str(), 1);
  ::setenv("BSP_JOB_ID", std::to_string(job_id).c_str(), 1);
  if (!remote.empty()) {
    bsp::launch::AgentSetup setup;
    setup.secret = config.secret;
    setup.job_id = job_id;
    std::vector<std::string> addresses = bsp::launch::local_addresses();
    addresses.insert(addresses.begin(), control_address);
    setup.control_hosts = fmt::format("{}", fmt::join(addresses, ","));
    setup.control_port = coordinator->port();
    setup.processes = static_cast<std::uint32_t>(processes);
    setup.directory = working_directory();
    setup.argv.assign(argv + first, argv + argc);
    setup.environment = forwarded_settings();
    for (const bsp::launch::Placement& placement : remote) {
      bsp::launch::AgentSetup for_host = setup;
      if (!placement.host.iface.empty()) for_host.environment.push_back("BSP_IFACE=" + placement.host.iface);
      try {
        remote_hosts.start(placement, std::move(for_host));
      } catch (const std::exception& error) {
        fmt::print(stderr, "bsprun: {}\n", error.what());
        return 1;
      }
    }
    if (!here[0]) remote_hosts.forward_stdin();
  }
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
  // Into a file or a pipe, the processes' stdio writes whatever fills its buffer (4 KiB
  // pieces cut anywhere), and lines of different processes broke mid-line: bsprun reads
  // each process's output through a pipe and writes whole lines. To a terminal a process
  // keeps it (its stdio then flushes line by line, and prompts appear before scanf).
  bool pipe_out = tag_output || !::isatty(STDOUT_FILENO);
  bool pipe_err = tag_output || !::isatty(STDERR_FILENO);
  // Two pipe descriptors per process stay open here, beside its control connection and its
  // start pipe: under a descriptor limit without room for them, the control plane comes first.
  const long local = std::count(here.begin(), here.end(), true);
  rlimit descriptors{};
  if (!tag_output && (pipe_out || pipe_err) && ::getrlimit(RLIMIT_NOFILE, &descriptors) == 0 &&
      descriptors.rlim_cur != RLIM_INFINITY && static_cast<long>(descriptors.rlim_cur) < 4 * local + 256) {
    fmt::print(stderr,
               "bsprun: {} descriptors (RLIMIT_NOFILE) leave no room for output pipes for {} processes: "
               "they write to the output directly (lines may break; raise the limit)\n",
               descriptors.rlim_cur, local);
    pipe_out = pipe_err = false;
  }
  // Each child's start pipe (start_report.h): read when it ended without joining, so the
  // coordinator can tell "could not start" and "failed in set-up" from a plain program.
  std::vector<int> start_reads(static_cast<std::size_t>(processes), -1);
  coordinator->set_start_report([&start_reads](int pid) {
    int& fd = start_reads.at(static_cast<std::size_t>(pid));
    bsp::launch::StartReport said = bsp::launch::read_start_report(fd);
    fd = -1;
    return bsp::control::StartReport{said.began, said.exec_error};
  });
  for (int pid = 0; pid < processes; ++pid) {
    if (!here[static_cast<std::size_t>(pid)]) continue;
    bsp::launch::StartPipe start_pipe;
    try {
      start_pipe = bsp::launch::make_start_pipe();
    } catch (const std::exception& error) {
      fmt::print(stderr, "bsprun: {}\n", error.what());
      return 1;
    }
    int out[2] = {-1, -1}, err[2] = {-1, -1};
    bool piped_out = pipe_out && ::pipe2(out, O_CLOEXEC) == 0;
    bool piped_err = pipe_err && ::pipe2(err, O_CLOEXEC) == 0;
    if (piped_out != pipe_out || piped_err != pipe_err) {
      if (tag_output) {  // tagging needs the pipes
        std::perror("bsprun: pipe");
        return 1;
      }
      // Out of descriptors (thousands of processes under a low RLIMIT_NOFILE): this
      // process writes to bsprun's output directly, as without the pipes.
      static bool said = false;
      if (!said)
        fmt::print(stderr, "bsprun: pipe: {}; pid {} on writes to the output directly (lines may break)\n",
                   std::strerror(errno), pid);
      said = true;
    }
    pid_t child = ::fork();
    if (child < 0) {
      std::perror("bsprun: fork");
      return 1;
    }
    if (child == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);       // never outlive the launcher
      if (::getppid() != launcher) ::_exit(1);  // the launcher died before the line above
      ::setenv("BSP_PID", std::to_string(pid).c_str(), 1);
      if (!netns.empty()) enter_namespace(netns + std::to_string(pid));
      if (pid != 0) {
        int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (null >= 0) ::dup2(null, STDIN_FILENO);
      }
      if (piped_out) ::dup2(out[1], STDOUT_FILENO);
      if (piped_err) ::dup2(err[1], STDERR_FILENO);
      // The program gets stdin, stdout, stderr and the job's secret, nothing of the
      // launcher's (its event loop, timers, the coordinator's listening socket).
      ::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
      ::fcntl(secret_fd, F_SETFD, 0);
      bsp::launch::inherit_start_pipe(start_pipe.write_fd);
      ::execvp(argv[first], argv + first);
      // Said once by the coordinator, naming the pid (not once per process here).
      std::string why = fmt::format("cannot run {}: {}", argv[first], std::strerror(errno));
      bsp::launch::report_exec_failure(start_pipe.write_fd, why.c_str());
      ::_exit(127);
    }
    ::close(start_pipe.write_fd);
    start_reads[static_cast<std::size_t>(pid)] = start_pipe.read_fd;
    if (piped_out) {
      ::close(out[1]);
      bsp::launch::forward_pipe(io, out[0], pid, 1, output);
    }
    if (piped_err) {
      ::close(err[1]);
      bsp::launch::forward_pipe(io, err[0], pid, 2, output);
    }
    coordinator->set_os_pid(pid, child);
  }
  // Every process of this host has the secret now (remote agents got it in their setup
  // message): nothing here needs the descriptor any more.
  ::close(secret_fd);
  ::unsetenv(bsp::auth::kSecretFdVariable);
  ::signal(SIGPIPE, SIG_IGN);
  bsp::control::Coordinator::run(io, config.who);
  return coordinator->exit_status();
}
