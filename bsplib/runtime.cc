// bsplib/runtime.cc: process start-up, the control plane handshake, bsp_end and aborts.
#include "bsplib/runtime.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "auth/job_secret.h"
#include "bsplib/control/control_client.h"
#include "bsplib/core_pinning.h"
#include "bsplib/control/coordinator.h"
#include "bsplib/launch/host_addresses.h"
#include "bsplib/launch/pmix_launch.h"
#include "bsplib/launch/start_report.h"
#include "bsplib/machine_share.h"
#include "bsplib/profile/profile_recorder.h"
#include "recovery/channel.h"
#include "recovery/frame_codec.h"
#include "recovery/runnable_census.h"
#include "recovery/spin_policy.h"
#include "recovery/wake_slice.h"
#include "transport/fault/fault_transport.h"
#include "transport/hybrid_transport.h"
#include "transport/nic/nic_transport.h"
#include "transport/registry.h"
#include "transport/tcp/tcp_transport.h"
#include "transport/trace/trace_transport.h"
#include "transport/udp/udp_transport.h"
#include "transport/xdp/xdp_transport.h"

namespace bsp {

using namespace std::chrono_literals;

namespace {

// For --stats under a hybrid transport: how many peers each path serves, and which
// (" shm_peers=1 net_peers=2 shm:1 udp:2,3"; the words without '=' are not summed).
std::string describe_paths(transport::Transport& transport, int pid, int nprocs) {
  transport::PathSplit* hybrid = transport.path_split();
  if (!hybrid) return {};
  std::vector<int> local, network;
  for (int peer = 0; peer < nprocs; ++peer) {
    if (peer != pid) (hybrid->is_local(peer) ? local : network).push_back(peer);
  }
  std::string report = fmt::format(" shm_peers={} net_peers={}", local.size(), network.size());
  if (!local.empty()) report += fmt::format(" {}:{}", hybrid->local().name(), fmt::join(local, ","));
  if (!network.empty()) report += fmt::format(" {}:{}", hybrid->network().name(), fmt::join(network, ","));
  return report;
}

// A failed job under a PMIx launcher: processes get this long to stop on the
// coordinator's word before the launcher is asked to kill what is left.
constexpr auto kPmixAbortGrace = 500ms;
// How long a process whose set-up failed waits for the coordinator's verdict on the job
// before it reports its own failure (75 times the coordinator's 20 ms reaping interval).
constexpr auto kSetupVerdictWait = 1500ms;
// Looks for the peers' lines in a quiet superstep (a few microseconds, as long as the
// general wait polls before it yields the core) before the general driver takes over.
constexpr int kQuietPolls = 256;

int env_int(const char* name, int fallback) {
  const char* value = std::getenv(name);
  return value && *value ? std::atoi(value) : fallback;
}

std::uint32_t random_job_id() {
  std::uint32_t id = 0;
  if (::getrandom(&id, sizeof id, 0) != sizeof id) id = static_cast<std::uint32_t>(::getpid()) * 2654435761u;
  return id == 0 ? 1 : id;
}

// A listening TCP socket on `host` (127.0.0.1; every interface for a PMIx launch, whose
// processes may be on other hosts), port chosen by the kernel.
int listen_locally(unsigned short& port, in_addr_t host = INADDR_LOOPBACK) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(host);
  socklen_t length = sizeof address;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) < 0 || ::listen(fd, SOMAXCONN) < 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) < 0) {
    std::perror("bsplib: cannot open the control socket");
    std::exit(1);
  }
  port = ntohs(address.sin_port);
  return fd;
}

// Who of the job runs on this machine (members: its pids here), for the spin's rule.
std::shared_ptr<const recovery::RunnableCensus> job_census(const std::vector<int>& members,
                                                           const control::JobStart& start) {
  std::vector<recovery::ProcessIdentity> here;
  for (int member : members) {
    const auto at = static_cast<std::size_t>(member);
    if (at >= start.os_pids.size() || at >= start.os_start_ticks.size()) return nullptr;
    here.push_back({start.os_pids[at], start.os_start_ticks[at]});
  }
  return std::make_shared<const recovery::RunnableCensus>(here);
}

}  // namespace

Runtime& Runtime::instance() {
  static Runtime* runtime = new Runtime();  // never destroyed: usable from atexit
  return *runtime;
}

int Runtime::nprocs_available() const {
  if (const char* launched = std::getenv("BSP_PROCESSES")) return std::atoi(launched);
  if (launch::pmix::started_by_pmix()) {
    try {
      return launch::pmix::job_size();
    } catch (const std::exception& error) {
      std::fprintf(stderr, "bsplib: %s\n", error.what());
      std::exit(1);
    }
  }
  unsigned cores = std::thread::hardware_concurrency();
  return cores == 0 ? 1 : static_cast<int>(cores);
}

double Runtime::seconds_since_begin() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
}

Engine& Runtime::engine(const char* call) {
  if (!engine_) {
    std::fprintf(stderr, "bsplib: %s called outside bsp_begin ... bsp_end\n", call);
    std::fflush(stderr);
    if (control_) abort_job(fmt::format("bsplib: {} called outside bsp_begin ... bsp_end", call));
    std::exit(1);
  }
  return *engine_;
}

void Runtime::init(void (*spmd)(), int, char**) {
  // Under bsprun every process runs main; the standard wants only pid 0 there, the others
  // running the SPMD function directly.
  if ((std::getenv("BSP_CONTROL") && env_int("BSP_PID", 0) != 0) ||
      (launch::pmix::started_by_pmix() && launch::pmix::environment_rank() != 0)) {
    spmd();
    std::exit(0);
  }
}

int Runtime::start_local_processes(int processes, std::uint32_t job_id, const auth::Key& secret, unsigned short& port) {
  int listen_fd = listen_locally(port);
  std::fflush(stdout);
  std::fflush(stderr);
  std::vector<pid_t> os_pids(static_cast<std::size_t>(processes), -1);
  const pid_t parent = ::getpid();
  for (int pid = 1; pid < processes; ++pid) {
    pid_t child = ::fork();
    if (child < 0) {
      std::perror("bsplib: fork");
      std::exit(1);
    }
    if (child == 0) {
      ::close(listen_fd);
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (::getppid() != parent) ::_exit(1);  // pid 0 died before the line above
      ::setenv("BSP_PROCESSES", std::to_string(processes).c_str(), 1);
      return pid;
    }
    os_pids[static_cast<std::size_t>(pid)] = child;
  }
  start_coordinator(processes, job_id, secret, listen_fd, os_pids);
  ::setenv("BSP_PROCESSES", std::to_string(processes).c_str(), 1);
  return 0;
}

// The job's coordinator, in a thread of pid 0 (os_pids: the processes it forked, -1 for
// those it did not). A failed job ends this process with the job's status; under a PMIx
// launcher, the launcher is first asked to stop what still runs.
void Runtime::start_coordinator(int processes, std::uint32_t job_id, const auth::Key& secret, int listen_fd,
                                const std::vector<pid_t>& os_pids) {
  control::CoordinatorConfig config;
  config.processes = processes;
  config.job_id = job_id;
  config.secret = secret;
  config.who = "bsplib";
  config.print_stats = options_.stats;
  config.link_timeout_seconds = options_.link_timeout_seconds;
  config.start_timeout_seconds = options_.start_timeout_seconds;
  config.os_pids = os_pids;
  config.listen_fd = listen_fd;
  const bool pmix = launch::pmix::started_by_pmix();
  coordinator_thread_ = std::thread([config, pmix] {
    boost::asio::io_context io;
    control::Coordinator coordinator(io, config);
    control::Coordinator::run(io, config.who);
    if (int status = coordinator.exit_status(); status != 0) {
      std::fflush(stdout);
      std::fflush(stderr);
      if (pmix) {
        // The others have been told to stop; a process computing outside BSPlib has not
        // heard it: the launcher stops it.
        std::this_thread::sleep_for(kPmixAbortGrace);
        launch::pmix::abort_job(status, "bsplib: the job was stopped (see the message above)");
      }
      ::_exit(status);
    }
  });
}

void Runtime::begin(int maxprocs) {
  if (begun_) {
    std::fprintf(stderr, "bsplib: bsp_begin called a second time\n");
    std::exit(1);
  }
  begun_ = true;
  launch::announce_begin();  // the launcher now knows a failure from here on is ours
  try {
    options_ = options_from_environment();
  } catch (const std::exception& error) {
    std::fprintf(stderr, "bsplib: %s\n", error.what());
    std::exit(1);
  }
  int pid = 0;
  int processes = 0;
  std::uint32_t job_id = 0;
  auth::Key secret{};
  std::string host = "127.0.0.1";
  unsigned short port = 0;
  if (const char* control = std::getenv("BSP_CONTROL")) {
    launched_ = true;
    std::string where = control;
    auto colon = where.rfind(':');
    host = where.substr(0, colon);
    port = static_cast<unsigned short>(std::atoi(where.c_str() + colon + 1));
    pid = env_int("BSP_PID", 0);
    processes = env_int("BSP_PROCESSES", 1);
    job_id = static_cast<std::uint32_t>(
        std::strtoul(std::getenv("BSP_JOB_ID") ? std::getenv("BSP_JOB_ID") : "1", nullptr, 10));
    try {
      std::optional<auth::Key> inherited = auth::inherited_job_secret();
      if (!inherited) throw std::runtime_error("the launcher handed down no job secret (BSP_SECRET_FD is not set)");
      secret = *inherited;
    } catch (const std::exception& error) {
      std::fprintf(stderr, "bsplib: pid %d: %s\n", pid, error.what());
      std::exit(1);
    }
  } else if (launch::pmix::started_by_pmix()) {
    // srun --mpi=pmix, mpirun: rank 0 hosts the coordinator and publishes how to reach it.
    try {
      pid = launch::pmix::environment_rank();
      processes = launch::pmix::job_size();
      std::optional<launch::pmix::Contact> mine;
      if (pid == 0) {
        mine.emplace();
        mine->job_id = random_job_id();
        mine->secret = auth::make_job_secret();
        int listen_fd = listen_locally(mine->port, INADDR_ANY);
        start_coordinator(processes, mine->job_id, mine->secret, listen_fd, std::vector<pid_t>(processes, -1));
      }
      launch::pmix::Contact contact = launch::pmix::exchange(mine);
      host = contact.hosts;
      port = contact.port;
      job_id = contact.job_id;
      secret = contact.secret;
    } catch (const std::exception& error) {
      std::fprintf(stderr, "bsplib: pid %d: %s\n", pid, error.what());
      std::exit(1);
    }
  } else {
    if (std::string why = launch::pmix::srun_without_pmix(); !why.empty()) {
      if (env_int("SLURM_PROCID", 0) == 0) std::fprintf(stderr, "bsplib: %s\n", why.c_str());
      std::exit(1);
    }
    if (maxprocs < 1) {
      std::fprintf(stderr, "bsplib: bsp_begin(%d): a job needs at least one process\n", maxprocs);
      std::exit(1);
    }
    processes = maxprocs;
    job_id = random_job_id();
    secret = auth::make_job_secret();  // the children inherit it in memory
    pid = start_local_processes(processes, job_id, secret, port);
  }
  started_ = std::chrono::steady_clock::now();

  try {
    control_ = std::make_unique<control::ControlClient>(host, port, secret, processes);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "bsplib: pid %d: %s\n", pid, error.what());
    std::exit(1);
  }
  choose_data_address();
  std::unique_ptr<transport::Transport> transport;
  std::string address;
  try {
    transport::TransportConfig config{
        pid, processes, job_id, options_.transport_options, secret, wire::receive_filter(job_id, pid)};
    if (!options_.fault.empty()) config.options["fault"] = options_.fault;
    config.pool_frames = options_.buffers;
    transport = transport::create_transport(options_.transport, config);
    if (auto trace = options_.transport_options.find("trace"); trace != options_.transport_options.end()) {
      transport = transport::wrap_with_trace(std::move(transport), trace->second, pid, options_.overwrite);
    }
    address = transport->local_address();
  } catch (const std::exception& error) {
    abort_job(fmt::format("bsplib: pid {}: {}", pid, error.what()));
  }
  control::JobStart start;
  try {
    start = control_->handshake(pid, maxprocs, address, machine_identity(), recovery::own_identity().start_ticks);
  } catch (const control::JobAborted& stopped) {
    if (!stopped.printed) std::fprintf(stderr, "bsplib: pid %d: %s\n", pid, stopped.message.c_str());
    leave(1);
  } catch (const std::exception& error) {
    abort_job(fmt::format("bsplib: pid {}: {}", pid, error.what()));
  }
  if (start.excess) {  // bsp_begin asked for fewer processes than were launched
    launch::pmix::finalize();
    std::exit(0);
  }
  try {
    transport->connect(start.addresses);
  } catch (const std::exception& error) {
    // A peer that died or stopped right after its own set-up leaves an address that leads
    // nowhere ("opening pid 3's inbox ...: No such file or directory"): that is a
    // consequence, and the coordinator learns the cause (it reaps the process, or hears
    // its error) within moments. Its verdict, when it comes, is the job's one message.
    await_verdict(kSetupVerdictWait);
    abort_job(fmt::format("bsplib: pid {}: {}", pid, error.what()));
  }
  path_report_ = describe_paths(*transport, pid, start.nprocs);
  recovery::ChannelConfig channel_config;
  channel_config.pid = pid;
  channel_config.nprocs = start.nprocs;
  channel_config.job_id = start.job_id;
  channel_config.secret = secret;
  channel_config.buffers = options_.buffers;
  channel_config.ack_policy = options_.ack_policy;
  // Without --spin-us: spin while few of the job's processes share each core of this
  // machine, not when many do (recovery/spin_policy.h, docs/tuning.md).
  // The job's members by address: who shares this machine, for the spin's rule and pinning.
  std::vector<std::string> members(
      start.addresses.begin(),
      start.addresses.begin() + std::min<std::size_t>(start.addresses.size(), static_cast<std::size_t>(start.nprocs)));
  const MachineShare share = machine_share(start.machines, members, pid);
  const int cores = recovery::usable_cores();  // (before pinning leaves this process one)
  if (options_.spin_us >= 0) {
    channel_config.spin_us = options_.spin_us;
  } else {
    channel_config.spin_us = recovery::default_spin_us(share.processes, cores);
    if (recovery::spins_on_idle_machine(share.processes, cores)) {
      channel_config.spin_extension = recovery::idle_machine_spin(job_census(share.members, start));
    }
  }
  spin_us_ = channel_config.spin_us;
  spin_extension_ = channel_config.spin_extension;
  // After connect and the spin's rule, which judge the cores this process may use as given.
  if (options_.pin) pinning_ = pin_to_core(share);
  // With --slice-us, a short slice: a process woken from a wait runs sooner where others
  // share its core (recovery/wake_slice.h).
  slice_us_ = recovery::request_wake_slice(options_.slice_us);
  std::unique_ptr<recovery::Channel> channel;
  try {
    channel = recovery::make_channel(std::move(transport), channel_config);
  } catch (const std::exception& error) {
    abort_job(fmt::format("bsplib: pid {}: {}", pid, error.what()));
  }
  engine_ = std::make_unique<Engine>(pid, start.nprocs, std::move(channel), *this);
  engine_->set_library_level(options_.library_level);
  engine_->set_pull_threshold(options_.pull_threshold);
  engine_->set_combine_puts(options_.combine_puts);
  engine_->set_superstep_lines(options_.superstep_lines);
  const bool quiet = options_.quiet_supersteps == "1" ||
                     (options_.quiet_supersteps == "auto" && share.processes <= cores);
  engine_->set_quiet_polls(quiet ? kQuietPolls : 0);
  engine_->set_sparse_sync(
      options_.sync == "sparse" || (options_.sync == "auto" && start.nprocs >= options_.sync_threshold),
      options_.sync_radix);
  engine_->set_stall_warning(std::chrono::milliseconds(static_cast<long>(options_.stall_warn_seconds * 1000)));
  engine_->set_link_timeout(std::chrono::milliseconds(static_cast<long>(options_.link_timeout_seconds * 1000)));
  if (!options_.profile.empty()) {
    try {
      profile_ = std::make_unique<profile::Recorder>(options_.profile, pid, start.nprocs, options_.transport,
                                                     engine_->channel(), options_.overwrite);
    } catch (const std::exception& error) {
      abort_job(fmt::format("bsplib: pid {}: {}", pid, error.what()));
    }
    profile::set_active(profile_.get());
  }
}

// Where tcp and udp listen (and nic finds its interface): --host if given; else the
// address of --iface; else, when the coordinator is on another host, the address this
// host reached it by (the interface toward the job's other hosts); else loopback.
void Runtime::choose_data_address() {
  std::map<std::string, std::string>& transport_options = options_.transport_options;
  if (transport_options.count("host")) return;
  if (auto iface = transport_options.find("iface"); iface != transport_options.end()) {
    std::string address = launch::interface_address(iface->second);
    if (address.empty() && (options_.transport == "nic" || options_.transport == "xdp"))
      return;  // raw frames need no IP address
    if (address.empty()) {
      abort_job(fmt::format("bsplib: pid {}: interface {} (--iface) has no IPv4 address on this host",
                            env_int("BSP_PID", 0), iface->second));
    }
    transport_options["host"] = address;
    return;
  }
  std::string reached_by = control_->local_address();
  if (!reached_by.empty() && reached_by.rfind("127.", 0) != 0) transport_options["host"] = reached_by;
}

std::string Runtime::statistics_report() const {
  if (!options_.stats || !engine_) return {};
  std::string report = fmt::format("supersteps={} comm_s={:.6f} spin_us={} idle_spin_us={} slice_us={}{}",
                                   engine_->supersteps(), engine_->communication_seconds(), spin_us_,
                                   spin_extension_.until_us, slice_us_, path_report_);
  if (const auto& census = spin_extension_.census) {
    report += fmt::format(" idle_spin_checks={} idle_spin_on={}", census->checks(), census->said_yes());
  }
  report += fmt::format(" quiet_supersteps={}", engine_->quiet_supersteps());
  report += engine_->single_copy_report();  // which path large shm transfers took, and why
  report += engine_->early_write_report();
  engine_->channel().stats().for_each(
      [&report](std::string_view key, std::uint64_t value) { report += fmt::format(" {}={}", key, value); });
  // What tcp's set-up refused (connections that did not prove the job's secret).
  const transport::Transport& transport = engine_->channel().transport();
  if (transport.capabilities().authenticated_links) {
    transport::TcpSetupStats setup = transport::tcp_setup_stats(transport);
    report += fmt::format(" tcp_refused={} tcp_unproven_peers={}", setup.refused_connections, setup.unproven_peers);
    // Connections made on first use (lazily), closed under --tcp-connections, most at once.
    report += fmt::format(" tcp_opened={} tcp_closed={} tcp_peak_open={} tcp_crossed={}", setup.connections_opened,
                          setup.connections_closed, setup.peak_connections, setup.crossed_connections);
  }
  // Sessions with the coordinator pushed out before they were proven (a flood) and made again.
  if (control_) report += fmt::format(" control_reconnects={}", control_->reconnects());
  // Which XDP mode (native or generic), zero-copy or copy, and busy polling xdp got.
  report += transport::xdp_stats(transport);
  // The offload udp got (segmentation, coalescing) or why not.
  report += transport::udp_stats(transport);
  // nic: its receive mode, frames dropped for their length, payloads placed.
  report += transport::nic_stats(transport);
  // The process's peak resident memory so far (getrusage: KiB), for memory per process.
  rusage usage{};
  if (::getrusage(RUSAGE_SELF, &usage) == 0) report += fmt::format(" max_rss_kib={}", usage.ru_maxrss);
  // What the fault injector did, next to what the reliable layer saw of it.
  if (const transport::FaultCounts* faults = transport::fault_counts(transport)) {
    report += fmt::format(" fault_dropped={} fault_duplicated={} fault_reordered={} fault_corrupted={}",
                          faults->dropped, faults->duplicated, faults->reordered, faults->corrupted);
  }
  report += " pin:" + pinning_;  // a word, not summed
  return report;
}

void Runtime::end() {
  Engine& engine = this->engine("bsp_end");
  int pid = engine.pid();
  engine.finish();
  if (profile_) {  // bsp_end's superstep (api.cc noted its start) and the trace's last records
    profile_->sync_ended();
    profile_->finish();
  }
  control_->done(statistics_report());
  try {
    while (!control_->finished(0ms)) engine.keep_alive(2ms);
  } catch (const control::JobAborted& stopped) {
    if (!stopped.printed) std::fprintf(stderr, "bsplib: pid %d: %s\n", pid, stopped.message.c_str());
    leave(1);
  }
  engine_.reset();
  if (pid != 0) {
    launch::pmix::finalize();
    std::exit(0);  // only pid 0 continues after bsp_end
  }
  if (profile_) {  // every process has written its part: join them
    profile::set_active(nullptr);
    if (std::string problem = profile_->join_parts(); !problem.empty()) {
      std::fprintf(stderr, "bsplib: --profile: %s\n", problem.c_str());
    }
    profile_.reset();
  }
  control_.reset();
  if (coordinator_thread_.joinable()) coordinator_thread_.join();  // the others have exited
  launch::pmix::finalize();
}

void Runtime::leave(int status) {
  std::fflush(stdout);
  std::fflush(stderr);
  // Pid 0 of a job started without bsprun hosts the coordinator: it ends the process once
  // every other process is gone.
  if (coordinator_thread_.joinable()) coordinator_thread_.join();
  ::_exit(status);
}

void Runtime::abort_job(const std::string& message) {
  if (control_) {
    control_->abort(message);
  } else {
    std::fprintf(stderr, "%s\n", message.c_str());
  }
  leave(1);
}

void Runtime::report_stall(long superstep, double waited_seconds, const std::vector<Awaited>& awaited) {
  if (!control_) return;
  std::vector<std::pair<int, double>> pids;
  for (const Awaited& one : awaited) pids.emplace_back(one.pid, one.silent_seconds);
  control_->stall(superstep, waited_seconds, pids);
}

void Runtime::await_verdict(std::chrono::milliseconds longest) {
  if (!control_) return;
  auto until = std::chrono::steady_clock::now() + longest;
  while (std::chrono::steady_clock::now() < until) {
    if (auto stopped = control_->poll_abort()) {
      if (!stopped->printed) std::fprintf(stderr, "bsplib: %s\n", stopped->message.c_str());
      leave(1);
    }
    std::this_thread::sleep_for(10ms);  // a failure path: a coarse look is enough
  }
}

void Runtime::check_for_abort() {
  if (!control_) return;
  if (auto stopped = control_->poll_abort()) {
    if (!stopped->printed) {
      std::fprintf(stderr, "bsplib: pid %d: %s; stopping\n", engine_ ? engine_->pid() : -1, stopped->message.c_str());
    }
    leave(1);
  }
}

}  // namespace bsp
