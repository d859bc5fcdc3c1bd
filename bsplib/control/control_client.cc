// bsplib/control/control_client.cc: the process side of the control plane.
#include "bsplib/control/control_client.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bsplib/control/protocol.h"

namespace bsp::control {

namespace asio = boost::asio;
using asio::ip::tcp;

namespace {
// Waiting for `start` after hello has no bound of its own: the coordinator watches the
// start (CoordinatorConfig::start_timeout_seconds) and says who is missing; this only
// guards against a coordinator that is alive but never answers.
constexpr std::chrono::milliseconds kHandshakeTimeout{std::chrono::hours(24)};
constexpr std::chrono::milliseconds kAbortEchoTimeout{2000};
// Reaching the coordinator and its challenge: 10 s, and 100 ms more per process (its
// event loop accepts them all at once on a machine that may be busy).
constexpr std::chrono::milliseconds kConnectTimeout{10000};
constexpr std::chrono::milliseconds kConnectPerProcess{100};
constexpr std::chrono::milliseconds kFirstRetry{5};  // session pushed out unproven: again after, doubling
constexpr std::chrono::milliseconds kMaxRetry{200};
}  // namespace

ControlClient::ControlClient(const std::string& hosts, unsigned short port, const auth::Key& secret, int processes)
    : socket_(io_), connect_timeout_(kConnectTimeout + kConnectPerProcess * std::clamp(processes, 1, 100000)) {
  std::vector<std::string> candidates;
  for (std::size_t begin = 0; begin <= hosts.size();) {
    std::size_t comma = std::min(hosts.find(',', begin), hosts.size());
    if (comma > begin) candidates.push_back(hosts.substr(begin, comma - begin));
    begin = comma + 1;
  }
  if (candidates.empty()) throw std::runtime_error("no address for the job's coordinator");
  // A session closed before the coordinator said `proven` was pushed out unproven (a
  // flood of strangers' connections) or never taken: connect again, backing off, until
  // the connect timeout. Once proven, a closed session is the coordinator gone.
  const auto deadline = std::chrono::steady_clock::now() + connect_timeout_;
  auto pause = kFirstRetry;
  for (int attempt = 1;; ++attempt) {
    std::string host = connect_to(candidates, port);
    try {
      if (prove(secret)) return;
    } catch (const JobAborted&) {
      // closed before `proven`: retried below
    } catch (const std::runtime_error& error) {
      throw std::runtime_error(fmt::format("the job's coordinator at {}:{} {}", host, port, error.what()));
    }
    boost::system::error_code ignored;
    socket_.close(ignored);
    pending_.clear();
    if (std::chrono::steady_clock::now() + pause >= deadline) {
      throw std::runtime_error(
          fmt::format("the job's coordinator at {}:{} closed the session before it was proven, "
                      "{} times in {} s (a flood of other connections?)",
                      host, port, attempt, connect_timeout_.count() / 1000));
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(2 * pause, kMaxRetry);
    ++reconnects_;
  }
}

// Connects to the first candidate that answers; returns it.
std::string ControlClient::connect_to(const std::vector<std::string>& candidates, unsigned short port) {
  // A coordinator that cannot be reached (a firewall, a wrong address) is an error after
  // a bounded wait, not the kernel's two minutes of SYN retries. Several addresses (a
  // launcher on another host lists every one it has) are tried in order, each bounded.
  std::vector<std::string> failures;
  for (const std::string& candidate : candidates) {
    boost::system::error_code ec = asio::error::timed_out;
    boost::system::error_code parse_error;
    asio::ip::address address = asio::ip::make_address(candidate, parse_error);
    if (parse_error) {
      failures.push_back(fmt::format("{}: not an IP address", candidate));
      continue;
    }
    io_.restart();
    socket_.async_connect(tcp::endpoint(address, port),
                          [&ec](const boost::system::error_code& result) { ec = result; });
    io_.run_for(candidates.size() > 1 ? connect_timeout_ / 4 : connect_timeout_);
    if (!ec) {
      io_.restart();
      socket_.set_option(tcp::no_delay(true));
      return candidate;
    }
    boost::system::error_code ignored;
    socket_.close(ignored);
    failures.push_back(fmt::format("{}: {}", candidate, ec.message()));
  }
  throw std::runtime_error(
      fmt::format("cannot reach the job's coordinator on port {} ({})", port, fmt::join(failures, "; ")));
}

// Answers the challenge; true once the coordinator says the proof holds. Throws
// JobAborted when the session closes first, std::runtime_error when it answers wrongly
// or not in time.
bool ControlClient::prove(const auth::Key& secret) {
  std::uint8_t type = 0;
  std::string challenge;
  if (!read_message(connect_timeout_, type, challenge) || static_cast<MessageType>(type) != MessageType::challenge ||
      challenge.size() != kChallengeSize) {
    throw std::runtime_error(fmt::format("did not send its challenge within {} ms", connect_timeout_.count()));
  }
  boost::system::error_code ec;
  asio::write(socket_, asio::buffer(MessageWriter(MessageType::proof).u64(session_proof(secret, challenge)).bytes()),
              ec);
  if (ec) throw JobAborted{"closed before the proof", false};
  std::string body;
  if (!read_message(connect_timeout_, type, body)) {
    throw std::runtime_error(fmt::format("did not answer this process's proof within {} ms", connect_timeout_.count()));
  }
  if (static_cast<MessageType>(type) != MessageType::proven) {
    throw std::runtime_error("did not accept this process's proof of the job's secret");
  }
  return true;
}

std::string ControlClient::local_address() const {
  boost::system::error_code ec;
  tcp::endpoint local = socket_.local_endpoint(ec);
  return ec ? std::string() : local.address().to_string();
}

bool ControlClient::read_message(std::chrono::milliseconds timeout, std::uint8_t& type, std::string& body) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (pending_.size() >= kFrameHeader) {
      std::uint32_t length;
      std::memcpy(&length, pending_.data(), 4);
      if (pending_.size() >= kFrameHeader + length) {
        type = static_cast<std::uint8_t>(pending_[4]);
        body = pending_.substr(kFrameHeader, length);
        pending_.erase(0, kFrameHeader + length);
        return true;
      }
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd waiter{fd(), POLLIN, 0};
    int ready = ::poll(&waiter, 1, std::max<long>(0, left.count()));
    if (ready == 0) return false;
    if (ready < 0) continue;
    char chunk[4096];
    ssize_t got = ::recv(fd(), chunk, sizeof chunk, MSG_DONTWAIT);
    if (got == 0) throw JobAborted{"the job's coordinator is gone", false};
    if (got < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      throw JobAborted{fmt::format("lost the job's coordinator: {}", std::strerror(errno)), false};
    }
    pending_.append(chunk, static_cast<std::size_t>(got));
  }
}

JobStart ControlClient::handshake(int pid, int requested_nprocs, const std::string& address, const std::string& machine,
                                  std::uint64_t os_start_ticks) {
  MessageWriter hello(MessageType::hello);
  hello.i32(pid).i32(requested_nprocs).i32(static_cast<std::int32_t>(::getpid())).str(address).str(machine);
  hello.u64(os_start_ticks);
  asio::write(socket_, asio::buffer(hello.bytes()));
  std::uint8_t type;
  std::string body;
  if (!read_message(kHandshakeTimeout, type, body)) {
    throw std::runtime_error("the job's coordinator said nothing for a day after this process's hello");
  }
  MessageReader reader(body);
  JobStart start;
  switch (static_cast<MessageType>(type)) {
    case MessageType::start:
      start.nprocs = reader.i32();
      start.job_id = reader.u32();
      for (int i = 0; i < start.nprocs; ++i) start.addresses.push_back(reader.str());
      for (int i = 0; i < start.nprocs; ++i) start.machines.push_back(reader.str());
      for (int i = 0; i < start.nprocs; ++i) {
        start.os_pids.push_back(reader.i32());
        start.os_start_ticks.push_back(reader.u64());
      }
      return start;
    case MessageType::excess:
      start.excess = true;
      return start;
    case MessageType::abort:
      throw JobAborted{reader.str()};
    default:
      throw std::runtime_error("unexpected control message during the handshake");
  }
}

void ControlClient::abort(const std::string& message) {
  boost::system::error_code ec;
  asio::write(socket_, asio::buffer(MessageWriter(MessageType::abort).str(message).bytes()), ec);
  if (ec) return;
  // Wait for the coordinator's echo: the message has been printed once it comes back.
  auto deadline = std::chrono::steady_clock::now() + kAbortEchoTimeout;
  std::uint8_t type;
  std::string body;
  try {
    while (std::chrono::steady_clock::now() < deadline) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (!read_message(left, type, body)) return;
      if (static_cast<MessageType>(type) == MessageType::abort) return;
    }
  } catch (const JobAborted&) {
  }
}

std::optional<JobAborted> ControlClient::poll_abort() {
  std::uint8_t type;
  std::string body;
  try {
    while (read_message(std::chrono::milliseconds(0), type, body)) {
      if (static_cast<MessageType>(type) == MessageType::abort) {
        return JobAborted{MessageReader(body).str(), true};
      }
    }
  } catch (const JobAborted& lost) {
    return lost;
  }
  return std::nullopt;
}

void ControlClient::done(const std::string& report) {
  boost::system::error_code ec;
  asio::write(socket_, asio::buffer(MessageWriter(MessageType::done).str(report).bytes()), ec);
}

void ControlClient::stall(long superstep, double waited_seconds, const std::vector<std::pair<int, double>>& awaited) {
  MessageWriter report(MessageType::stall);
  report.i32(static_cast<std::int32_t>(superstep)).i32(static_cast<std::int32_t>(waited_seconds * 1000));
  report.u32(static_cast<std::uint32_t>(awaited.size()));
  for (const auto& [pid, silent] : awaited) report.i32(pid).i32(static_cast<std::int32_t>(silent * 1000));
  boost::system::error_code ec;
  asio::write(socket_, asio::buffer(report.bytes()), ec);
}

bool ControlClient::finished(std::chrono::milliseconds timeout) {
  std::uint8_t type;
  std::string body;
  if (!read_message(timeout, type, body)) return false;
  switch (static_cast<MessageType>(type)) {
    case MessageType::finish:
      return true;
    case MessageType::abort:
      throw JobAborted{MessageReader(body).str()};
    default:
      return false;
  }
}

}  // namespace bsp::control
