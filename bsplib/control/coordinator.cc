// bsplib/control/coordinator.cc: handshake, orderly and unorderly shutdown, failure
// detection and statistics for one job, on Boost.Asio (see coordinator.h).
#include "bsplib/control/coordinator.h"

#include <fmt/format.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <sstream>

#include "bsplib/control/protocol.h"
#include "bsplib/control/write_queue.h"

namespace bsp::control {

namespace asio = boost::asio;
using asio::ip::tcp;
using namespace std::chrono_literals;

namespace {

constexpr auto kReapInterval = 20ms;      // how often launched processes are checked
constexpr auto kLostGrace = 300ms;        // EOF without exit status: wait this long for it
constexpr auto kRemoteLostGrace = 600ms;  // the same for a process whose end its launcher reports
constexpr auto kKillGrace = 3000ms;       // after an abort, processes get this long to stop
constexpr auto kAcceptPause = 20ms;       // accept failed (out of descriptors): try again after
// Unproven sessions held at once: room for every process to connect at the same moment
// plus this many strangers, within what the descriptor limit leaves (unproven_limits()).
constexpr std::size_t kStrangerSlots = 64;
constexpr int kCannotStartStatus = 127;  // as a shell's for a command it could not run

std::string describe_exit(int status) {
  if (WIFSIGNALED(status)) {
    return fmt::format("was killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  }
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  return "stopped";
}

}  // namespace

struct Coordinator::Impl : std::enable_shared_from_this<Impl> {
  struct Session {
    Session(tcp::socket s, asio::io_context& io) : socket(std::move(s)), proof_timer(io) {}
    tcp::socket socket;
    asio::steady_timer proof_timer;
    std::string source;     // the peer's address: unproven sessions are capped per source
    std::string challenge;  // sent on accept; the first message must answer it
    WriteQueue<tcp::socket> writes;
    bool proven = false;
    int pid = -1;
    char header[kFrameHeader];
    std::string body;
  };

  struct Process {
    std::shared_ptr<Session> session;
    pid_t os_pid = -1;                          // this host's child: waited for and killed by OS pid
    pid_t reported_os_pid = -1;                 // what the process said in its hello
    std::uint64_t reported_os_start_ticks = 0;  // and its start time (0 unknown)
    bool remote = false;                        // on another host: its launcher reports its end
    bool reaped = false;
    int wait_status = 0;
    bool hello = false;
    bool excess = false;
    bool done = false;
    bool lost = false;          // control connection closed
    bool never_joined = false;  // exited without calling bsp_begin
    StartReport start_said;     // how far its start got, when its launcher reported its end
    // The progress watchdog: the process's last report of a long wait in bsp_sync.
    bool stalled = false;
    bool stall_announced = false;
    int stall_superstep = 0;
    std::vector<int> awaiting;
    std::vector<double> silent_seconds;  // per awaited pid: since anything moved with it
    int requested = 0;
    std::string address;
    std::string machine;  // its kernel's boot id (spin_policy.h: who shares the cores)
    std::string report;
  };

  Impl(asio::io_context& io_context, CoordinatorConfig cfg)
      : io(io_context),
        config(std::move(cfg)),
        acceptor(io),
        reap_timer(io),
        kill_timer(io),
        accept_timer(io),
        start_timer(io),
        processes(config.processes) {
    if (config.listen_fd >= 0) {
      acceptor.assign(tcp::v4(), config.listen_fd);
    } else {
      tcp::endpoint local(asio::ip::make_address(config.listen_address), 0);
      acceptor.open(local.protocol());
      acceptor.bind(local);
      acceptor.listen();
    }
    for (std::size_t i = 0; i < config.os_pids.size() && i < processes.size(); ++i) {
      processes[i].os_pid = config.os_pids[i];
    }
    for (std::size_t i = 0; i < config.hosts.size() && i < processes.size(); ++i) {
      processes[i].remote = !config.hosts[i].empty();
    }
    unproven_limits();
  }

  // How many unproven sessions may be open at once, in all and from one source address.
  // Every process may connect at the same moment, and strangers get kStrangerSlots more;
  // but the sessions never take more than half of what the descriptor limit leaves once
  // each process has its session and two output pipes. One source gets at most half the
  // slots (or p + 8), so a host that floods pushes out its own sessions, not another's.
  void unproven_limits() {
    const std::size_t p = static_cast<std::size_t>(std::max(config.processes, 1));
    std::size_t wanted = 2 * (p + kStrangerSlots);
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
      const std::size_t budget = static_cast<std::size_t>(limit.rlim_cur);
      const std::size_t used = 3 * p + 64;
      wanted = std::min(wanted, budget > used + 32 ? (budget - used) / 2 : 16);
    }
    // Never fewer than the processes (and a few): members connecting at once must fit
    // even from one address, or they would push each other out.
    max_unproven = std::max(wanted, p + 16);
    max_unproven_per_source = std::max(max_unproven / 2, p + 8);
  }

  void begin() {
    accept();
    schedule_reap();
  }

  // ---- connections ----
  // The accept loop never ends before the job does: a failed accept (out of descriptors,
  // a connection reset before it was taken) is retried, after a pause when the process
  // is out of descriptors, having first closed the oldest unproven session to make room.
  void accept() {
    acceptor.async_accept([self = shared_from_this()](boost::system::error_code ec, tcp::socket s) {
      if (self->is_over || ec == asio::error::operation_aborted || !self->acceptor.is_open()) return;
      if (ec) return self->accept_failed(ec);
      boost::system::error_code ignored;
      s.set_option(tcp::no_delay(true), ignored);
      auto session = std::make_shared<Session>(std::move(s), self->io);
      tcp::endpoint peer = session->socket.remote_endpoint(ignored);
      if (ignored) {  // gone already
        session->socket.close(ignored);
        return self->accept();
      }
      session->source = peer.address().to_string();
      self->forget_closed_sessions();
      self->make_room_for(session->source);
      self->sessions.push_back(session);
      self->challenge(session);
      self->read_header(session);
      self->accept();
    });
  }

  void accept_failed(const boost::system::error_code& ec) {
    ++accept_failures;
    const bool out_of_descriptors = ec == asio::error::no_descriptors || ec.value() == ENFILE ||
                                    ec == asio::error::no_buffer_space || ec == asio::error::no_memory;
    if (out_of_descriptors) {
      forget_closed_sessions();
      if (auto oldest = oldest_unproven(""); oldest) refuse(oldest);
    }
    accept_timer.expires_after(out_of_descriptors ? kAcceptPause : kAcceptPause / 10);
    accept_timer.async_wait([self = shared_from_this()](boost::system::error_code wait_ec) {
      if (!wait_ec && !self->is_over) self->accept();
    });
  }

  // The oldest unproven open session (from `source`, or from anywhere when it is "").
  std::shared_ptr<Session> oldest_unproven(const std::string& source) const {
    for (const auto& session : sessions) {
      if (!session->proven && session->socket.is_open() && (source.empty() || session->source == source)) {
        return session;
      }
    }
    return nullptr;
  }

  // Before a new unproven session from `source` joins: its source, and everyone, stay
  // within their caps by closing the oldest unproven session (its source's own first;
  // else one of the source that holds the most).
  void make_room_for(const std::string& source) {
    std::size_t total = 0, mine = 0;
    std::map<std::string, std::size_t> per_source;
    for (const auto& session : sessions) {
      if (session->proven || !session->socket.is_open()) continue;
      ++total;
      ++per_source[session->source];
      if (session->source == source) ++mine;
    }
    if (mine >= max_unproven_per_source) {
      ++unproven_pushed_out;
      return refuse(oldest_unproven(source));
    }
    if (total >= max_unproven) {
      auto busiest = std::max_element(per_source.begin(), per_source.end(),
                                      [](const auto& a, const auto& b) { return a.second < b.second; });
      ++unproven_pushed_out;
      refuse(oldest_unproven(busiest->first));
    }
  }

  // Every session starts unproven: it gets a random challenge, may send only a proof (a
  // few bytes), and is closed if the proof is wrong or has not come within 2 s. Nobody
  // without the job's secret can say anything to the coordinator.
  void challenge(const std::shared_ptr<Session>& session) {
    session->challenge.resize(kChallengeSize);
    auth::random_bytes(std::as_writable_bytes(std::span(session->challenge.data(), session->challenge.size())));
    send(session, MessageWriter(MessageType::challenge).blob(session->challenge).bytes());
    session->proof_timer.expires_after(kProofDeadline);
    session->proof_timer.async_wait([self = shared_from_this(), session](boost::system::error_code ec) {
      if (!ec && !session->proven) self->refuse(session);
    });
  }

  void refuse(const std::shared_ptr<Session>& session) {
    if (!session) return;
    boost::system::error_code ignored;
    session->socket.close(ignored);
    session->proof_timer.cancel();
  }

  void forget_closed_sessions() {
    sessions.erase(std::remove_if(sessions.begin(), sessions.end(),
                                  [](const auto& s) { return !s->socket.is_open() && s->pid < 0; }),
                   sessions.end());
  }

  void read_header(const std::shared_ptr<Session>& session) {
    asio::async_read(session->socket, asio::buffer(session->header, kFrameHeader),
                     [self = shared_from_this(), session](boost::system::error_code ec, std::size_t) {
                       if (ec) return self->on_closed(session);
                       std::uint32_t length;
                       std::memcpy(&length, session->header, 4);
                       auto type = static_cast<MessageType>(session->header[4]);
                       if (!session->proven && (type != MessageType::proof || length > kMaxUnprovenBody)) {
                         return self->refuse(session);
                       }
                       if (length > kMaxBodyToCoordinator) return self->on_closed(session);
                       session->body.resize(length);
                       asio::async_read(session->socket, asio::buffer(session->body),
                                        [self, session](boost::system::error_code ec2, std::size_t) {
                                          if (ec2) return self->on_closed(session);
                                          self->on_message(session);
                                          self->read_header(session);
                                        });
                     });
  }

  // Queues a message; writes go out asynchronously in order, so a process that does not
  // read its control socket never stalls the coordinator.
  void send(const std::shared_ptr<Session>& session, const std::string& bytes) {
    if (session) session->writes.send(session->socket, bytes, session);
  }

  void on_message(const std::shared_ptr<Session>& session) {
    auto type = static_cast<MessageType>(session->header[4]);
    try {
      MessageReader reader(session->body);
      if (!session->proven) {
        if (session->body.size() != sizeof(std::uint64_t) ||
            !auth::same_tag(reader.u64(), session_proof(config.secret, session->challenge))) {
          return refuse(session);  // silently: a stranger gets no say, not even in the log
        }
        session->proven = true;
        session->proof_timer.cancel();
        // Said so: a process whose session is closed before this was pushed out unproven
        // (a flood) and connects again; after it, a closed session is a lost process.
        return send(session, MessageWriter(MessageType::proven).bytes());
      }
      switch (type) {
        case MessageType::hello:
          return on_hello(session, reader);
        case MessageType::abort:
          return on_abort(session, reader.str());
        case MessageType::done:
          return on_done(session->pid, reader.str());
        case MessageType::stall:
          return on_stall(session->pid, reader);
        default:
          break;
      }
    } catch (const std::exception& error) {
      fmt::print(stderr, "{}: bad control message: {}\n", config.who, error.what());
    }
  }

  void on_hello(const std::shared_ptr<Session>& session, MessageReader& reader) {
    int pid = reader.i32();
    int requested = reader.i32();
    pid_t os_pid = reader.i32();
    std::string address = reader.str();
    std::string machine = reader.str();
    std::uint64_t os_start_ticks = reader.u64();
    if (pid < 0 || pid >= config.processes || processes[pid].hello) {
      fmt::print(stderr, "{}: unexpected hello from pid {}\n", config.who, pid);
      return;
    }
    session->pid = pid;
    Process& process = processes[pid];
    process.session = session;
    process.hello = true;
    process.requested = requested;
    process.address = std::move(address);
    process.machine = std::move(machine);
    process.reported_os_pid = os_pid;  // for messages and the spin's census only: never waited for or killed
    process.reported_os_start_ticks = os_start_ticks;
    joined();
    if (aborted) return send(session, MessageWriter(MessageType::abort).str(abort_message).bytes());
    for (int other = 0; other < config.processes; ++other) {
      if (processes[other].never_joined) return fail_unjoined(other);
    }
    if (std::all_of(processes.begin(), processes.end(), [](const Process& p) { return p.hello; })) {
      start_job();
    }
  }

  // ---- start-up's deadline ----
  // How long the start may go without a join: the configured time, or a budget that
  // grows with the processes and hosts (a loaded or large machine starts slower).
  double start_budget_seconds() const {
    if (config.start_timeout_seconds > 0) return config.start_timeout_seconds;
    std::vector<std::string> others;
    for (const std::string& host : config.hosts) {
      if (!host.empty() && std::find(others.begin(), others.end(), host) == others.end()) others.push_back(host);
    }
    return 120 + 0.5 * config.processes + 10.0 * static_cast<double>(others.size());
  }

  // A process joined: progress, so the deadline moves; the first join arms the watchdog
  // (before it, the program may be one that never calls bsp_begin: nothing to wait for).
  void joined() {
    last_join = std::chrono::steady_clock::now();
    if (start_watch) return;
    start_watch = true;
    first_join = last_join;
    watch_start();
  }

  void watch_start() {
    auto budget = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(start_budget_seconds()));
    start_timer.expires_at(last_join + budget);
    start_timer.async_wait([self = shared_from_this()](boost::system::error_code ec) {
      if (ec || self->aborted || self->is_over || self->job_size > 0) return;
      if (std::chrono::steady_clock::now() <
          self->last_join + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                std::chrono::duration<double>(self->start_budget_seconds()))) {
        return self->watch_start();  // a join came meanwhile
      }
      self->start_timed_out();
    });
  }

  // Nobody joined for the budget: name the phase and the pids still missing.
  void start_timed_out() {
    std::vector<std::string> missing;
    int count = 0;
    for (int pid = 0; pid < config.processes; ++pid) {
      if (processes[pid].hello) continue;
      if (++count <= 16) missing.push_back(std::to_string(pid) + where(pid));
    }
    if (count > 16) missing.push_back(fmt::format("and {} more", count - 16));
    auto seconds = [](auto span) { return std::chrono::duration<double>(span).count(); };
    auto now = std::chrono::steady_clock::now();
    stop_failed(fmt::format(
        "{}: the job's start timed out waiting for processes to join (bsp_begin's hello): {} of {} joined, "
        "pid{} {} did not; the last joined {:.1f} s ago, the first {:.1f} s ago (--start-timeout={:g}); stopping "
        "the job\n",
        config.who, config.processes - count, config.processes, count == 1 ? "" : "s", fmt::join(missing, ", "),
        seconds(now - last_join), seconds(now - first_join), start_budget_seconds()));
  }

  // The job's size is what pid 0's bsp_begin asked for: with bsp_init, the others run
  // the SPMD function without reading what pid 0 read, so their requests mean nothing.
  void start_job() {
    int nprocs = processes[0].requested;
    if (nprocs < 1 || nprocs > config.processes) {
      return stop_failed(
          nprocs < 1 ? fmt::format("{}: bsp_begin({}) on pid 0: a job needs at least one process\n", config.who, nprocs)
                     : fmt::format("{}: bsp_begin({}) on pid 0 asks for more processes than the {} started; "
                                   "start more ({} -n {}) or ask for at most {}\n",
                                   config.who, nprocs, config.processes,
                                   config.who == "bsprun" ? "bsprun" : "the launcher's", nprocs, config.processes));
    }
    job_size = nprocs;
    MessageWriter start(MessageType::start);
    start.i32(nprocs).u32(config.job_id);
    for (int pid = 0; pid < nprocs; ++pid) start.str(processes[pid].address);
    for (int pid = 0; pid < nprocs; ++pid) start.str(processes[pid].machine);
    for (int pid = 0; pid < nprocs; ++pid)
      start.i32(processes[pid].reported_os_pid).u64(processes[pid].reported_os_start_ticks);
    const std::string bytes = start.bytes();
    for (int pid = 0; pid < config.processes; ++pid) {
      if (pid < nprocs) {
        send(processes[pid].session, bytes);
      } else {
        processes[pid].excess = true;
        send(processes[pid].session, MessageWriter(MessageType::excess).bytes());
      }
    }
  }

  // A process has waited long in bsp_sync: say for whom, once per wait; two processes
  // that wait for each other past the link timeout have a cut data link: stop the job.
  void on_stall(int pid, MessageReader& reader) {
    if (pid < 0 || aborted) return;
    Process& p = processes[pid];
    int superstep = reader.i32();
    double seconds = reader.i32() / 1000.0;
    std::uint32_t count = reader.u32();
    if (count > static_cast<std::uint32_t>(config.processes))
      throw std::runtime_error("stall report names too many pids");
    std::vector<int> awaiting;
    std::vector<double> silent;
    for (std::uint32_t i = 0; i < count; ++i) {
      int other = reader.i32();
      if (other < 0 || other >= config.processes) throw std::runtime_error("stall report names a pid out of range");
      awaiting.push_back(other);
      silent.push_back(reader.i32() / 1000.0);
    }
    if (awaiting.empty()) {
      p.stalled = p.stall_announced = false;
      return;
    }
    p.stalled = true;
    p.stall_superstep = superstep;
    p.awaiting = std::move(awaiting);
    p.silent_seconds = std::move(silent);
    if (!p.stall_announced) {
      p.stall_announced = true;
      std::vector<std::string> whom;
      for (std::size_t i = 0; i < p.awaiting.size(); ++i) {
        int other = p.awaiting[i];
        const Process& q = processes[other];
        std::string heard = fmt::format("last data moved {:.1f} s ago", p.silent_seconds[i]);
        whom.push_back(
            q.stalled ? fmt::format("pid {} ({}; in bsp_sync of superstep {} too)", other, heard, q.stall_superstep)
                      : fmt::format("pid {} ({}; not known to wait in bsp_sync: computing, or stuck "
                                    "outside BSPlib)",
                                    other, heard));
      }
      fmt::print(stderr, "{}: pid {} has waited {:.1f} s in bsp_sync (superstep {}) for {}\n", config.who, pid, seconds,
                 superstep, fmt::join(whom, ", "));
      std::fflush(stderr);
    }
    // A cut link: each waits for the other and nothing has moved between them, either
    // way, for the link timeout. (A slow link that still moves data is not cut.)
    for (std::size_t i = 0; i < p.awaiting.size(); ++i) {
      int other = p.awaiting[i];
      const Process& q = processes[other];
      auto back = std::find(q.awaiting.begin(), q.awaiting.end(), pid);
      bool mutual = q.stalled && back != q.awaiting.end();
      double silent = mutual ? std::min(p.silent_seconds[i],
                                        q.silent_seconds[static_cast<std::size_t>(back - q.awaiting.begin())])
                             : 0;
      if (mutual && silent >= config.link_timeout_seconds) {
        return stop_failed(fmt::format(
            "{}: the data link between pid {} and pid {} carries nothing: both wait in bsp_sync (supersteps {} and "
            "{}) and no data has moved between them for {:.1f} s; stopping the job (--link-timeout={})\n",
            config.who, std::min(pid, other), std::max(pid, other), (pid < other ? p : q).stall_superstep,
            (pid < other ? q : p).stall_superstep, silent, config.link_timeout_seconds));
      }
    }
  }

  void on_done(int pid, std::string report) {
    if (pid < 0) return;
    processes[pid].done = true;
    processes[pid].report = std::move(report);
    if (aborted || job_size == 0) return;
    for (int i = 0; i < job_size; ++i) {
      if (!processes[i].done) return;
    }
    if (config.print_stats) print_reports();
    const std::string finish = MessageWriter(MessageType::finish).bytes();
    for (int i = 0; i < job_size; ++i) send(processes[i].session, finish);
  }

  void on_abort(const std::shared_ptr<Session>& from, std::string message) {
    if (!aborted) {
      if (message.empty() || message.back() != '\n') message += '\n';
      fmt::print(stderr, "{}", message);
      std::fflush(stderr);
      stop_all(message);
    }
    // The sender waits for this echo: its message is out. (It may not have said hello.)
    if (from->pid < 0) send(from, MessageWriter(MessageType::abort).str(abort_message).bytes());
  }

  void on_closed(const std::shared_ptr<Session>& session) {
    // An unproven session that ends gives its descriptor back now, not at the proof
    // deadline: a stranger connecting and closing in a loop holds nothing.
    if (!session->proven) return refuse(session);
    // (A process on another host: its launcher reports how it ended.)
    int pid = session->pid;
    if (pid < 0 || processes[pid].session != session) return;
    Process& process = processes[pid];
    process.lost = true;
    if (aborted || process.done || process.excess) return check_over();
    // Give the reaper a moment to learn how the process ended, for a better message.
    auto timer = std::make_shared<asio::steady_timer>(io, process.remote ? kRemoteLostGrace : kLostGrace);
    timer->async_wait([self = shared_from_this(), timer, pid](boost::system::error_code) {
      Process& p = self->processes[pid];
      if (!self->aborted && !p.done && !p.excess) {
        self->fail(
            pid, p.reaped ? describe_exit(p.wait_status) + " before bsp_end" : "closed its connection before bsp_end");
      }
    });
  }

  // ---- failure and abort ----
  void fail(int pid, const std::string& what) {
    stop_failed(
        fmt::format("{}: process pid {}{} {}; stopping the other processes\n", config.who, pid, where(pid), what));
  }

  // " on host NAME (OS pid N)" for a process on another host, else "".
  std::string where(int pid) const {
    const Process& p = processes[pid];
    if (!p.remote) return {};
    pid_t os_pid = p.os_pid > 0 ? p.os_pid : p.reported_os_pid;
    return os_pid > 0 ? fmt::format(" on host {} (OS pid {})", config.hosts[pid], os_pid)
                      : fmt::format(" on host {}", config.hosts[pid]);
  }

  // The job failed: says why (once, here) and stops every process.
  void stop_failed(const std::string& message) {
    fmt::print(stderr, "{}", message);
    std::fflush(stderr);
    failed = true;
    stop_all(message);
  }

  void stop_all(const std::string& message) {
    aborted = true;
    abort_message = message;
    const std::string bytes = MessageWriter(MessageType::abort).str(message).bytes();
    for (Process& p : processes) {
      if (p.session && !p.lost) send(p.session, bytes);
    }
    kill_timer.expires_after(kKillGrace);
    kill_timer.async_wait([self = shared_from_this()](boost::system::error_code ec) {
      if (ec) return;
      for (Process& p : self->processes) {
        if (p.os_pid > 0 && !p.remote && !p.reaped) ::kill(p.os_pid, SIGKILL);
      }
      if (self->config.kill_remote) self->config.kill_remote();
    });
    check_over();
  }

  // ---- processes ----
  void schedule_reap() {
    reap_timer.expires_after(kReapInterval);
    reap_timer.async_wait([self = shared_from_this()](boost::system::error_code ec) {
      if (ec) return;
      self->reap();
      if (!self->is_over) self->schedule_reap();
    });
  }

  void reap() {
    for (int pid = 0; pid < config.processes; ++pid) {
      Process& p = processes[pid];
      if (p.os_pid <= 0 || p.remote || p.reaped) continue;
      int status = 0;
      pid_t got = ::waitpid(p.os_pid, &status, WNOHANG);
      if (got == 0) continue;
      ended(pid, got < 0 ? 0 : status);
    }
    check_over();
  }

  // Process pid ended with wait status `status` (this host's child, or reported).
  void ended(int pid, int status) {
    Process& p = processes[pid];
    {
      p.reaped = true;
      p.wait_status = status;
      bool clean = WIFEXITED(p.wait_status) && WEXITSTATUS(p.wait_status) == 0;
      if (!clean) worst_status = std::max(worst_status, 1);
      StartReport said = p.start_said;  // reported with its end (another host's)
      if (!p.remote && start_report) {
        StartReport local = start_report(pid);  // read (and closed) for every local process
        if (!p.hello) said = local;
      }
      if (!aborted && !p.done && !p.excess) {
        if (p.hello) {
          fail(pid, describe_exit(p.wait_status) + " before bsp_end");
        } else if (!said.exec_error.empty()) {
          // Not the program's doing: it never ran (a wrong path, no permission).
          could_not_start = true;
          stop_failed(fmt::format("{}: pid {}{} could not start: {}\n", config.who, pid, where(pid), said.exec_error));
        } else if (said.began) {
          // It called bsp_begin and ended before joining: its own message says why.
          fail(pid, fmt::format("failed during set-up ({}, in bsp_begin before joining the job): see its message above",
                                describe_exit(p.wait_status)));
        } else {
          // Not a member yet: if nobody ever joins, this is a plain program, not a failure.
          p.never_joined = true;
          if (std::any_of(processes.begin(), processes.end(), [](const Process& q) { return q.hello; })) {
            fail_unjoined(pid);
          }
        }
      }
    }
  }

  void fail_unjoined(int pid) {
    fail(pid, describe_exit(processes[pid].wait_status) +
                  " without calling bsp_begin (it never joined the job the others are in)");
  }

  // Every process ended and none called bsp_begin: a program that is not (or not yet) a
  // BSPlib program. Its exit status is the job's; with several copies, say so.
  void finish_unjoined() {
    plain_program = true;
    for (const Process& p : processes) {
      int status = WIFEXITED(p.wait_status) ? WEXITSTATUS(p.wait_status) : 128 + WTERMSIG(p.wait_status);
      if (plain_status == 0) plain_status = status;
    }
    if (config.processes > 1) {
      fmt::print(stderr,
                 "{}: none of the {} processes called bsp_begin: the program never joined a BSPlib job "
                 "(each copy ran on its own)\n",
                 config.who, config.processes);
      std::fflush(stderr);
    }
  }

  void check_over() {
    for (const Process& p : processes) {
      if ((p.os_pid > 0 || p.remote) && !p.reaped) return;
      // A process that is not our child (pid 0 in a program started without bsprun)
      // counts as over when it finished or the job was aborted.
      if (p.os_pid <= 0 && !aborted && !p.done && !p.excess) return;
    }
    if (is_over) return;
    is_over = true;
    if (!aborted && std::none_of(processes.begin(), processes.end(), [](const Process& p) { return p.hello; })) {
      finish_unjoined();
    }
    reap_timer.cancel();
    kill_timer.cancel();
    accept_timer.cancel();
    start_timer.cancel();
    boost::system::error_code ec;
    acceptor.close(ec);
    for (const auto& session : sessions) session->socket.close(ec);
  }

  void print_reports() {
    // Reports are "key=value" pairs; print each process's and the sum of every key, with
    // as many decimals as the processes gave (a sum of doubles prints binary noise:
    // comm_s=0.004135000000000001).
    std::map<std::string, double> total;
    std::map<std::string, int> decimals;
    std::vector<std::string> keys;
    fmt::print(stderr, "{}: statistics\n", config.who);
    for (int pid = 0; pid < job_size; ++pid) {
      fmt::print(stderr, "  pid {:<3} {}\n", pid, processes[pid].report);
      std::istringstream words(processes[pid].report);
      std::string word;
      while (words >> word) {
        auto eq = word.find('=');
        if (eq == std::string::npos) continue;
        std::string key = word.substr(0, eq);
        if (!total.count(key)) keys.push_back(key);
        total[key] += std::strtod(word.c_str() + eq + 1, nullptr);
        auto point = word.find('.', eq);
        int places = point == std::string::npos ? 0 : static_cast<int>(word.size() - point - 1);
        decimals[key] = std::max(decimals[key], std::min(places, 9));
      }
    }
    std::string line;
    for (const std::string& key : keys) line += fmt::format(" {}={:.{}f}", key, total[key], decimals[key]);
    fmt::print(stderr, "  total  {}\n", line);
    // What strangers cost: unproven sessions pushed out by a flood, accepts that failed.
    fmt::print(stderr, "  coordinator unproven_pushed_out={} accept_failures={}\n", unproven_pushed_out,
               accept_failures);
    std::fflush(stderr);
  }

  asio::io_context& io;
  CoordinatorConfig config;
  tcp::acceptor acceptor;
  asio::steady_timer reap_timer;
  asio::steady_timer kill_timer;
  asio::steady_timer accept_timer;          // the pause after a failed accept
  std::size_t max_unproven = 0;             // unproven sessions open at once
  std::size_t max_unproven_per_source = 0;  // of them, from one address
  long accept_failures = 0;
  long unproven_pushed_out = 0;
  asio::steady_timer start_timer;  // start-up's watchdog, from the first hello to start
  bool start_watch = false;
  std::chrono::steady_clock::time_point first_join{}, last_join{};
  std::vector<Process> processes;
  std::vector<std::shared_ptr<Session>> sessions;  // every connection, hello or not
  int job_size = 0;
  bool aborted = false;
  bool failed = false;
  bool is_over = false;
  bool plain_program = false;  // no process ever called bsp_begin
  int plain_status = 0;        // then: the first non-zero exit status of its copies
  int worst_status = 0;
  bool could_not_start = false;  // the job stopped because a process could not be started
  std::function<StartReport(int)> start_report;
  std::string abort_message;
};

Coordinator::Coordinator(asio::io_context& io, CoordinatorConfig config)
    : impl_(std::make_shared<Impl>(io, std::move(config))) {
  impl_->begin();
}

Coordinator::~Coordinator() = default;

unsigned short Coordinator::port() const { return impl_->acceptor.local_endpoint().port(); }

void Coordinator::set_start_report(std::function<StartReport(int pid)> report) {
  impl_->start_report = std::move(report);
}

void Coordinator::set_os_pid(int pid, pid_t os_pid) { impl_->processes.at(pid).os_pid = os_pid; }

bool Coordinator::over() const { return impl_->is_over; }

void Coordinator::process_exited(int pid, pid_t os_pid, int wait_status, const StartReport& said) {
  if (pid < 0 || pid >= impl_->config.processes || impl_->processes[pid].reaped) return;
  if (os_pid > 0) impl_->processes[pid].os_pid = os_pid;
  impl_->processes[pid].start_said = said;
  impl_->ended(pid, wait_status);
  impl_->check_over();
}

void Coordinator::processes_lost(const std::vector<int>& pids, const std::string& why) {
  bool any = false;
  for (int pid : pids) {
    if (pid < 0 || pid >= impl_->config.processes || impl_->processes[pid].reaped) continue;
    Impl::Process& p = impl_->processes[pid];
    p.reaped = true;
    p.wait_status = 1 << 8;  // as if it had exited with status 1
    impl_->worst_status = std::max(impl_->worst_status, 1);
    any = any || (!p.done && !p.excess);
  }
  if (any && !impl_->aborted) impl_->stop_failed(why);
  impl_->check_over();
}

void Coordinator::run(asio::io_context& io, const std::string& who) {
  for (;;) {
    try {
      io.run();
      return;
    } catch (const std::exception& error) {
      fmt::print(stderr, "{}: coordinator: {} (going on)\n", who, error.what());
    }
  }
}

int Coordinator::exit_status() const {
  if (impl_->could_not_start) return kCannotStartStatus;
  if (impl_->aborted) return 1;
  if (impl_->plain_program) return impl_->plain_status;
  return impl_->worst_status;
}

}  // namespace bsp::control
