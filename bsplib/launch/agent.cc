// bsplib/launch/agent.cc: the agent on a remote host (see agent.h): a poll loop over
// bsprun's frames, the processes' output pipes and a heartbeat clock.
#include "bsplib/launch/agent.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/close_range.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "auth/job_secret.h"
#include "bsplib/launch/agent_protocol.h"
#include "bsplib/launch/start_report.h"

namespace bsp::launch {
namespace {

using Clock = std::chrono::steady_clock;

struct Child {
  int pid = -1;  // BSPlib pid
  pid_t os_pid = -1;
  int out = -1, err = -1;  // read ends of its stdout and stderr
  int start = -1;          // read end of its start pipe (start_report.h)
  bool reaped = false;
  int status = 0;
  bool reported = false;
  int drain_rounds = 0;  // loop rounds since it ended with output pipes open
};

class Agent {
 public:
  int run() {
    ::signal(SIGPIPE, SIG_IGN);
    AgentSetup setup = read_setup();
    start(setup);
    return loop();
  }

 private:
  // ---- writing frames to bsprun (blocking: bsprun always reads) ----
  void send(const std::string& frame) {
    std::string_view rest = frame;
    while (!rest.empty()) {
      ssize_t wrote = ::write(STDOUT_FILENO, rest.data(), rest.size());
      if (wrote < 0 && errno == EINTR) continue;
      if (wrote <= 0) {  // bsprun is gone: nobody to work for
        kill_all();
        launcher_gone_ = true;
        return;
      }
      rest.remove_prefix(static_cast<std::size_t>(wrote));
    }
  }

  // ---- the setup ----
  AgentSetup read_setup() {
    auto deadline = Clock::now() + kAgentStartLimit;
    AgentMessage kind;
    std::string body;
    while (!input_.next(kind, body)) {
      if (!read_input(deadline)) throw std::runtime_error("bsprun sent no setup");
    }
    if (kind != AgentMessage::setup) throw std::runtime_error("bsprun's first frame is not the setup");
    return decode_setup(body);
  }

  // Reads what bsprun sent into input_; false on end-of-file or past the deadline.
  bool read_input(Clock::time_point deadline) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd waiter{STDIN_FILENO, POLLIN, 0};
    if (::poll(&waiter, 1, static_cast<int>(left)) <= 0) return errno == EINTR;
    char buffer[65536];
    ssize_t got = ::read(STDIN_FILENO, buffer, sizeof buffer);
    if (got <= 0) return got < 0 && errno == EINTR;
    input_.append(buffer, static_cast<std::size_t>(got));
    return true;
  }

  // The coordinator's addresses, the one this host's ssh session came from first: that
  // is the address bsprun's host reaches this one by.
  static std::string coordinator_hosts(const AgentSetup& setup) {
    std::string hosts = setup.control_hosts;
    if (const char* connection = std::getenv("SSH_CONNECTION")) {
      std::string client(connection);
      client = client.substr(0, client.find(' '));
      if (!client.empty()) hosts = client + (hosts.empty() ? "" : "," + hosts);
    }
    return hosts;
  }

  void start(const AgentSetup& setup) {
    int secret_fd = auth::secret_descriptor(setup.secret);
    // Closed once the processes are started, or when starting them fails.
    std::unique_ptr<int, void (*)(int*)> close_secret(&secret_fd, [](int* fd) { ::close(*fd); });
    const std::string control = fmt::format("{}:{}", coordinator_hosts(setup), setup.control_port);
    std::vector<char*> argv;
    for (const std::string& arg : setup.argv) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    const pid_t agent = ::getpid();
    for (int pid : setup.pids) {
      int out[2], err[2], in[2] = {-1, -1};
      if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0 || (pid == 0 && ::pipe2(in, O_CLOEXEC) != 0)) {
        throw std::runtime_error(fmt::format("cannot make pipes: {}", std::strerror(errno)));
      }
      StartPipe start_pipe = make_start_pipe();
      pid_t os_pid = ::fork();
      if (os_pid < 0) throw std::runtime_error(fmt::format("cannot fork: {}", std::strerror(errno)));
      if (os_pid == 0) {
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the agent
        if (::getppid() != agent) ::_exit(1);
        ::dup2(out[1], STDOUT_FILENO);
        ::dup2(err[1], STDERR_FILENO);
        if (pid == 0) {
          ::dup2(in[0], STDIN_FILENO);
        } else {
          int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
          if (null >= 0) ::dup2(null, STDIN_FILENO);
        }
        for (const std::string& variable : setup.environment) ::putenv(const_cast<char*>(variable.c_str()));
        ::setenv("BSP_CONTROL", control.c_str(), 1);
        ::setenv("BSP_PID", std::to_string(pid).c_str(), 1);
        ::setenv("BSP_PROCESSES", std::to_string(setup.processes).c_str(), 1);
        ::setenv("BSP_JOB_ID", std::to_string(setup.job_id).c_str(), 1);
        ::setenv(auth::kSecretFdVariable, std::to_string(secret_fd).c_str(), 1);
        if (!setup.directory.empty() && ::chdir(setup.directory.c_str()) != 0) {
          fmt::print(stderr, "bsprun: cannot enter directory {} on this host: {}; running in {}\n", setup.directory,
                     std::strerror(errno), std::getenv("HOME") ? std::getenv("HOME") : "/");
        }
        ::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
        ::fcntl(secret_fd, F_SETFD, 0);
        inherit_start_pipe(start_pipe.write_fd);
        ::execvp(argv[0], argv.data());
        // bsprun's coordinator says it, naming the pid and this host.
        std::string why = fmt::format("cannot run {}: {}", argv[0], std::strerror(errno));
        report_exec_failure(start_pipe.write_fd, why.c_str());
        ::_exit(127);
      }
      ::close(start_pipe.write_fd);
      ::close(out[1]);
      ::close(err[1]);
      if (pid == 0) {
        ::close(in[0]);
        stdin_fd_ = in[1];
        ::fcntl(stdin_fd_, F_SETFL, O_NONBLOCK);
      }
      children_.push_back({pid, os_pid, out[0], err[0], start_pipe.read_fd});
      send(agent_message(AgentMessage::started).i32(pid).i32(os_pid).bytes());
    }
  }

  // ---- the loop ----
  int loop() {
    auto next_beat = Clock::now();
    last_heard_ = Clock::now();
    for (;;) {
      reap();
      report_ended();
      if (launcher_gone_ || all_reported()) break;
      auto now = Clock::now();
      if (now >= next_beat) {
        send(agent_message(AgentMessage::heartbeat).bytes());
        next_beat = now + kHeartbeat;
      }
      if (now - last_heard_ > kLauncherSilenceLimit && !killed_) {
        fmt::print(stderr, "bsprun agent: nothing from bsprun for {} ms: killing this host's processes\n",
                   kLauncherSilenceLimit.count());
        kill_all();
      }
      std::vector<pollfd> waiters;
      waiters.push_back({input_open_ ? STDIN_FILENO : -1, POLLIN, 0});
      waiters.push_back({!stdin_pending_.empty() ? stdin_fd_ : -1, POLLOUT, 0});
      for (const Child& child : children_) {
        waiters.push_back({child.out, POLLIN, 0});
        waiters.push_back({child.err, POLLIN, 0});
      }
      // Short naps: children are reaped by polling (no signal handlers in the loop).
      int ready = ::poll(waiters.data(), waiters.size(), 20);
      if (ready <= 0) continue;
      if (waiters[0].revents) handle_input();
      if (waiters[1].revents) write_stdin();
      for (std::size_t i = 0; i < children_.size(); ++i) {
        if (waiters[2 + 2 * i].revents) forward(children_[i], children_[i].out, 1);
        if (waiters[3 + 2 * i].revents) forward(children_[i], children_[i].err, 2);
      }
    }
    return 0;
  }

  void handle_input() {
    char buffer[65536];
    ssize_t got = ::read(STDIN_FILENO, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) return;
    if (got <= 0) {
      // bsprun's end of the remote shell closed: bsprun ended or was interrupted. Leave
      // nothing behind.
      input_open_ = false;
      kill_all();
      return;
    }
    last_heard_ = Clock::now();
    input_.append(buffer, static_cast<std::size_t>(got));
    AgentMessage kind;
    std::string body;
    try {
      while (input_.next(kind, body)) {
        switch (kind) {
          case AgentMessage::stdin_data:
            stdin_pending_ += body;
            write_stdin();
            break;
          case AgentMessage::stdin_end:
            stdin_closing_ = true;
            write_stdin();
            break;
          case AgentMessage::kill:
            kill_all();
            break;
          default:
            break;  // heartbeat
        }
      }
    } catch (const std::exception& error) {
      fmt::print(stderr, "bsprun agent: {}; killing this host's processes\n", error.what());
      input_open_ = false;
      kill_all();
    }
  }

  void write_stdin() {
    if (stdin_fd_ < 0) return;
    while (!stdin_pending_.empty()) {
      ssize_t wrote = ::write(stdin_fd_, stdin_pending_.data(), stdin_pending_.size());
      if (wrote < 0 && errno == EINTR) continue;
      if (wrote < 0 && errno == EAGAIN) return;
      if (wrote < 0) {  // pid 0 closed its standard input: drop the rest
        stdin_pending_.clear();
        break;
      }
      stdin_pending_.erase(0, static_cast<std::size_t>(wrote));
    }
    if (stdin_closing_) {
      ::close(stdin_fd_);
      stdin_fd_ = -1;
    }
  }

  void forward(Child& child, int& fd, int stream) {
    char buffer[kOutputChunk];
    ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) return;
    if (got <= 0) {
      ::close(fd);
      fd = -1;
      return;
    }
    send(agent_message(AgentMessage::output)
             .i32(child.pid)
             .u32(static_cast<std::uint32_t>(stream))
             .blob(std::string_view(buffer, static_cast<std::size_t>(got)))
             .bytes());
  }

  void reap() {
    for (Child& child : children_) {
      if (child.reaped) continue;
      int status = 0;
      pid_t got = ::waitpid(child.os_pid, &status, WNOHANG);
      if (got == 0) continue;
      child.reaped = true;
      child.status = got < 0 ? 0 : status;
    }
  }

  // A child's end goes out once its output is all out (its pipes closed), so bsprun
  // prints everything a process wrote before it says how the process ended.
  void report_ended() {
    for (Child& child : children_) {
      if (!child.reaped || child.reported) continue;
      if (child.out >= 0 || child.err >= 0) {
        // Output pipes may outlive the process (a grandchild holds them): give up on
        // them shortly after the process is gone.
        if (++child.drain_rounds < 50) continue;
        if (child.out >= 0) ::close(child.out);
        if (child.err >= 0) ::close(child.err);
        child.out = child.err = -1;
      }
      child.reported = true;
      StartReport said = read_start_report(child.start);
      child.start = -1;
      send(agent_message(AgentMessage::exited)
               .i32(child.pid)
               .i32(child.status)
               .u32(said.began ? 1 : 0)
               .str(said.exec_error)
               .bytes());
    }
  }

  bool all_reported() const {
    for (const Child& child : children_) {
      if (!child.reported) return false;
    }
    return true;
  }

  void kill_all() {
    killed_ = true;
    for (const Child& child : children_) {
      if (!child.reaped) ::kill(child.os_pid, SIGKILL);
    }
  }

  FrameAssembler input_;
  bool input_open_ = true;
  bool launcher_gone_ = false;
  bool killed_ = false;
  Clock::time_point last_heard_;
  std::vector<Child> children_;
  int stdin_fd_ = -1;
  std::string stdin_pending_;
  bool stdin_closing_ = false;
};

}  // namespace

int run_agent() {
  try {
    Agent agent;
    return agent.run();
  } catch (const std::exception& error) {
    std::string message = fmt::format("bsprun agent: {}", error.what());
    std::string frame = agent_message(AgentMessage::failed).str(message).bytes();
    if (::write(STDOUT_FILENO, frame.data(), frame.size()) < 0) fmt::print(stderr, "{}\n", message);
    return 1;
  }
}

}  // namespace bsp::launch
