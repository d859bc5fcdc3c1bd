// bsplib/launch/remote_hosts.cc: remote-shell sessions to the agents (see remote_hosts.h),
// on the coordinator's Boost.Asio loop.
#include "bsplib/launch/remote_hosts.h"

#include "bsplib/control/write_queue.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/close_range.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <map>
#include <thread>

namespace bsp::launch {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

namespace {

// The processes' end is known; the remote shells get this long to close before they
// are terminated.
constexpr auto kShellCloseGrace = std::chrono::milliseconds(2000);

std::string describe_status(int status) {
  if (WIFSIGNALED(status)) return fmt::format("killed by signal {}", WTERMSIG(status));
  return fmt::format("exit status {}", WEXITSTATUS(status));
}

std::string quote_for_shell(const std::string& word) {
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

}  // namespace

struct RemoteHosts::Impl : std::enable_shared_from_this<Impl> {
  struct Session {
    explicit Session(asio::io_context& io) : to_agent(io), from_agent(io) {}
    Placement placement;
    pid_t shell = -1;
    bool shell_reaped = false;
    int shell_status = 0;
    asio::posix::stream_descriptor to_agent;
    asio::posix::stream_descriptor from_agent;
    control::WriteQueue<asio::posix::stream_descriptor> writes;
    FrameAssembler input;
    char buffer[65536];
    Clock::time_point started;
    Clock::time_point last_heard;
    bool heard = false;
    bool closed = false;  // the agent's output ended
    bool lost = false;
    Clock::time_point terminated_at{};  // when the remote shell was sent SIGTERM
    std::map<int, pid_t> running;       // pid -> OS pid (-1 until started)
  };

  Impl(asio::io_context& io_context, std::vector<std::string> rsh_words, std::string agent_path,
       OutputForwarder& forwarder)
      : io(io_context), rsh(std::move(rsh_words)), agent(std::move(agent_path)), output(forwarder), timer(io) {}

  void start(const Placement& placement, AgentSetup setup) {
    auto session = std::make_shared<Session>(io);
    session->placement = placement;
    setup.pids = placement.pids;
    for (int pid : placement.pids) session->running[pid] = -1;
    int down[2], up[2];
    if (::pipe2(down, O_CLOEXEC) != 0 || ::pipe2(up, O_CLOEXEC) != 0) {
      throw std::runtime_error(fmt::format("cannot make pipes: {}", std::strerror(errno)));
    }
    std::vector<std::string> words = rsh;
    words.push_back(placement.host.name);
    words.push_back("exec " + quote_for_shell(agent) + " --agent");
    std::vector<char*> argv;
    for (std::string& word : words) argv.push_back(word.data());
    argv.push_back(nullptr);
    const pid_t launcher = ::getpid();
    pid_t shell = ::fork();
    if (shell < 0) throw std::runtime_error(fmt::format("cannot fork: {}", std::strerror(errno)));
    if (shell == 0) {
      // bsprun interrupted or killed: the remote shell ends, so the agent sees its input
      // end and kills the processes.
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (::getppid() != launcher) ::_exit(1);
      ::dup2(down[0], STDIN_FILENO);
      ::dup2(up[1], STDOUT_FILENO);
      ::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
      ::execvp(argv[0], argv.data());
      fmt::print(stderr, "bsprun: cannot run the remote shell {}: {}\n", argv[0], std::strerror(errno));
      ::_exit(127);
    }
    ::close(down[0]);
    ::close(up[1]);
    session->shell = shell;
    session->to_agent.assign(down[1]);
    session->from_agent.assign(up[0]);
    session->started = Clock::now();
    sessions.push_back(session);
    send(session, encode_setup(setup));
    read(session);
    if (sessions.size() == 1) tick();
  }

  void send(const std::shared_ptr<Session>& session, std::string bytes) {
    session->writes.send(session->to_agent, std::move(bytes), session);
  }

  // ---- reading from an agent ----
  void read(const std::shared_ptr<Session>& session) {
    session->from_agent.async_read_some(
        asio::buffer(session->buffer),
        [self = shared_from_this(), session](boost::system::error_code ec, std::size_t got) {
          if (ec) {
            session->closed = true;
            boost::system::error_code ignored;
            session->from_agent.close(ignored);
            return;
          }
          session->last_heard = Clock::now();
          session->heard = true;
          session->input.append(session->buffer, got);
          try {
            AgentMessage kind;
            std::string body;
            while (session->input.next(kind, body)) self->on_frame(session, kind, body);
          } catch (const std::exception& error) {
            return self->lose(session, fmt::format("the agent on host {} sent a malformed frame ({})",
                                                   session->placement.host.name, error.what()));
          }
          self->read(session);
        });
  }

  void on_frame(const std::shared_ptr<Session>& session, AgentMessage kind, const std::string& body) {
    control::MessageReader reader(body);
    switch (kind) {
      case AgentMessage::started: {
        int pid = reader.i32();
        pid_t os_pid = reader.i32();
        if (auto found = session->running.find(pid); found != session->running.end()) found->second = os_pid;
        break;
      }
      case AgentMessage::output: {
        int pid = reader.i32();
        int stream = static_cast<int>(reader.u32());
        if (!session->running.count(pid) || (stream != 1 && stream != 2))
          throw std::runtime_error("output of a stranger");
        output.write(pid, stream, std::string_view(body).substr(8));
        break;
      }
      case AgentMessage::exited: {
        int pid = reader.i32();
        int status = reader.i32();
        control::StartReport said;
        if (body.size() > 8) {  // how far its start got (an older agent does not say)
          said.began = reader.u32() != 0;
          said.exec_error = reader.str();
        }
        auto found = session->running.find(pid);
        if (found == session->running.end()) break;
        pid_t os_pid = found->second;
        session->running.erase(found);
        output.flush(pid);
        if (coordinator) coordinator->process_exited(pid, os_pid, status, said);
        break;
      }
      case AgentMessage::failed:
        return lose(session,
                    fmt::format("cannot start processes on host {}: {}", session->placement.host.name, reader.str()));
      default:
        break;  // heartbeat
    }
  }

  // ---- liveness ----
  void tick() {
    timer.expires_after(kHeartbeat);
    timer.async_wait([self = shared_from_this()](boost::system::error_code ec) {
      if (ec) return;
      if (self->check_sessions()) self->tick();
    });
  }

  std::chrono::milliseconds start_limit() const {
    return kAgentStartLimit + kAgentStartPerHost * static_cast<long>(sessions.size());
  }

  // Beats, notices silent agents and ended shells; false once every shell has ended.
  bool check_sessions() {
    auto now = Clock::now();
    bool any_alive = false;
    bool job_over = coordinator && coordinator->over();
    if (job_over && over_since == Clock::time_point()) over_since = now;
    for (const auto& session : sessions) {
      if (!session->shell_reaped) {
        int status = 0;
        pid_t got = ::waitpid(session->shell, &status, WNOHANG);
        if (got != 0) {
          session->shell_reaped = true;
          session->shell_status = got < 0 ? 0 : status;
        }
      }
      if (session->shell_reaped && session->closed && !session->running.empty()) {
        std::string why = session->heard ? "ended" : "could not start the agent";
        lose(session, fmt::format("the remote shell to host {} {} ({})", session->placement.host.name, why,
                                  describe_status(session->shell_status)));
      }
      if (!session->running.empty() && !session->lost) {
        send(session, agent_message(AgentMessage::heartbeat).bytes());
        if (session->heard && now - session->last_heard > kAgentSilenceLimit) {
          lose(session, fmt::format("host {} stopped answering: nothing came over its remote shell for {:.1f} s "
                                    "(host down, or its link cut)",
                                    session->placement.host.name,
                                    std::chrono::duration<double>(now - session->last_heard).count()));
        } else if (!session->heard && now - session->started > start_limit()) {
          lose(session, fmt::format("the job's launch timed out: the agent on host {} did not answer within {:g} s "
                                    "of starting the remote shell",
                                    session->placement.host.name, start_limit().count() / 1000.0));
        }
      }
      if (job_over && now - over_since > kShellCloseGrace) terminate_shell(*session);
      if (session->terminated_at != Clock::time_point() && !session->shell_reaped &&
          now - session->terminated_at > kShellCloseGrace) {
        ::kill(session->shell, SIGKILL);  // a shell that ignores SIGTERM (or is stopped)
      }
      if (!session->shell_reaped || !session->closed) any_alive = true;
    }
    return any_alive || !job_over;
  }

  void terminate_shell(Session& session) {
    if (session.shell_reaped || session.terminated_at != Clock::time_point()) return;
    session.terminated_at = Clock::now();
    ::kill(session.shell, SIGTERM);
  }

  // The host's processes can no longer be reached: the job stops, naming them.
  void lose(const std::shared_ptr<Session>& session, const std::string& why) {
    if (session->lost) return;
    session->lost = true;
    std::vector<int> pids;
    for (const auto& [pid, os_pid] : session->running) {
      pids.push_back(pid);
      output.flush(pid);
    }
    session->running.clear();
    terminate_shell(*session);
    boost::system::error_code ignored;
    session->to_agent.close(ignored);
    if (coordinator && !pids.empty()) {
      coordinator->processes_lost(
          pids, fmt::format("bsprun: {}; {} {} there {} lost; stopping the job\n", why,
                            pids.size() == 1 ? "pid" : "pids", fmt::join(pids, ", "), pids.size() == 1 ? "is" : "are"));
    }
  }

  void kill_all() {
    for (const auto& session : sessions) send(session, agent_message(AgentMessage::kill).bytes());
  }

  // pid 0's standard input, read by a thread (it may be a file or a terminal, which an
  // event loop cannot wait on alike) and handed to the loop.
  void forward_stdin() {
    std::shared_ptr<Session> target;
    for (const auto& session : sessions) {
      if (session->running.count(0)) target = session;
    }
    if (!target) return;
    std::weak_ptr<Impl> weak = shared_from_this();
    std::thread([weak, target, &io = io] {
      char buffer[65536];
      for (;;) {
        ssize_t got = ::read(STDIN_FILENO, buffer, sizeof buffer);
        if (got < 0 && errno == EINTR) continue;
        std::string bytes = got > 0
                                ? agent_message(AgentMessage::stdin_data).blob(std::string_view(buffer, got)).bytes()
                                : agent_message(AgentMessage::stdin_end).bytes();
        auto self = weak.lock();
        if (!self) return;
        asio::post(io, [self, target, bytes = std::move(bytes)] { self->send(target, bytes); });
        if (got <= 0) return;
      }
    }).detach();
  }

  asio::io_context& io;
  std::vector<std::string> rsh;
  std::string agent;
  OutputForwarder& output;
  asio::steady_timer timer;
  std::vector<std::shared_ptr<Session>> sessions;
  control::Coordinator* coordinator = nullptr;
  Clock::time_point over_since{};
};

RemoteHosts::RemoteHosts(asio::io_context& io, std::vector<std::string> rsh, std::string agent, OutputForwarder& output)
    : impl_(std::make_shared<Impl>(io, std::move(rsh), std::move(agent), output)) {}

RemoteHosts::~RemoteHosts() { impl_->timer.cancel(); }

void RemoteHosts::start(const Placement& placement, AgentSetup setup) { impl_->start(placement, std::move(setup)); }
void RemoteHosts::attach(control::Coordinator& coordinator) { impl_->coordinator = &coordinator; }
void RemoteHosts::forward_stdin() { impl_->forward_stdin(); }
void RemoteHosts::kill_all() { impl_->kill_all(); }

}  // namespace bsp::launch
