// tests/transport/tcp_transport_test.cc: the tcp transport's set-up and losses, with
// several transports in threads of this process and hand-made "stranger" sockets that
// speak (or fail to speak) the handshake documented in transport/tcp/tcp_transport.cc.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "auth/mac.h"
#include "transport/tcp/tcp_transport.h"
#include "transport/transport.h"

namespace bsp::transport {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr std::uint32_t kJobId = 0x5eed1234;

auth::Key key(std::uint8_t seed) {
  auth::Key key{};
  for (std::size_t i = 0; i < key.size(); ++i) key[i] = static_cast<std::uint8_t>(seed + 7 * i);
  return key;
}

struct Job {
  std::vector<std::unique_ptr<Transport>> members;
  std::vector<std::string> addresses;
};

// n transports with their listening addresses; secrets[i] (default: all the same key).
Job make_job(int n, int timeout_ms = 10000, std::vector<auth::Key> secrets = {}) {
  Job job;
  for (int pid = 0; pid < n; ++pid) {
    TransportConfig config;
    config.pid = pid;
    config.nprocs = n;
    config.job_id = kJobId;
    config.secret = secrets.empty() ? key(1) : secrets[static_cast<std::size_t>(pid)];
    config.options["connect_timeout_ms"] = std::to_string(timeout_ms);
    job.members.push_back(make_tcp_transport(config));
    job.addresses.push_back(job.members.back()->local_address());
  }
  return job;
}

// Runs connect() of the given pids (default: all) in threads; the error of each ("" when
// it connected), indexed by pid.
std::vector<std::string> connect(Job& job, std::vector<int> pids = {}) {
  if (pids.empty()) {
    for (int pid = 0; pid < static_cast<int>(job.members.size()); ++pid) pids.push_back(pid);
  }
  std::vector<std::string> errors(job.members.size());
  std::vector<std::thread> threads;
  for (int pid : pids) {
    threads.emplace_back([&, pid] {
      try {
        job.members[static_cast<std::size_t>(pid)]->connect(job.addresses);
      } catch (const std::exception& error) {
        errors[static_cast<std::size_t>(pid)] = error.what();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  return errors;
}

struct Collect final : FrameSink {
  std::vector<std::pair<int, std::vector<std::byte>>> frames;
  std::vector<std::pair<int, std::string>> losses;
  void on_frame(int peer, std::span<const std::byte> frame) override {
    frames.emplace_back(peer, std::vector<std::byte>(frame.begin(), frame.end()));
  }
  void on_peer_lost(int peer, std::string_view why) override { losses.emplace_back(peer, std::string(why)); }
};

std::vector<std::byte> test_frame(int src, int dst, int k) {
  std::size_t size = 8 + static_cast<std::size_t>((k * 7919 + src * 131 + dst * 17) % 40000);
  if (k % 3 == 0) size = 8 + static_cast<std::size_t>(k % 50);  // small ones between large
  std::vector<std::byte> frame(size);
  frame[0] = static_cast<std::byte>(src);
  frame[1] = static_cast<std::byte>(dst);
  std::memcpy(frame.data() + 2, &k, 4);
  for (std::size_t i = 6; i < size; ++i) frame[i] = static_cast<std::byte>((k + i * 31) & 0xff);
  return frame;
}

// Every member sends `count` frames to every other (half of them gathered from two
// pieces); each receives them whole and in order.
void exchange(Job& job, int count) {
  const int n = static_cast<int>(job.members.size());
  std::vector<Collect> sinks(static_cast<std::size_t>(n));
  std::vector<std::vector<int>> next(static_cast<std::size_t>(n), std::vector<int>(static_cast<std::size_t>(n), 0));
  const auto deadline = Clock::now() + 20s;
  for (;;) {
    bool all_sent = true;
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) {
        if (i == j) continue;
        int& k = next[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)];
        while (k < count) {
          std::vector<std::byte> frame = test_frame(i, j, k);
          Transport& member = *job.members[static_cast<std::size_t>(i)];
          // Every other frame gathered from two pieces split anywhere (a header and a
          // payload kept apart): partial writes may end in either piece.
          std::size_t split = static_cast<std::size_t>(k * 13) % frame.size();
          std::span<const std::byte> whole(frame);
          SendStatus status = k % 2 ? member.send_gathered(j, whole.first(split), whole.subspan(split))
                                    : member.send(j, frame);
          if (status != SendStatus::sent) break;
          ++k;
        }
        all_sent &= k == count;
      }
    }
    bool all_received = true;
    for (int i = 0; i < n; ++i) {
      job.members[static_cast<std::size_t>(i)]->flush();
      job.members[static_cast<std::size_t>(i)]->receive(sinks[static_cast<std::size_t>(i)], 1000);
      all_received &= sinks[static_cast<std::size_t>(i)].frames.size() == static_cast<std::size_t>((n - 1) * count);
    }
    if (all_sent && all_received) break;
    ASSERT_LT(Clock::now(), deadline) << "frames still missing after 20 s";
  }
  for (int i = 0; i < n; ++i) {
    const Collect& sink = sinks[static_cast<std::size_t>(i)];
    EXPECT_TRUE(sink.losses.empty()) << sink.losses.front().second;
    std::vector<int> expected_k(static_cast<std::size_t>(n), 0);
    for (const auto& [src, frame] : sink.frames) {
      int k = expected_k[static_cast<std::size_t>(src)]++;
      ASSERT_EQ(frame, test_frame(src, i, k)) << "pid " << i << ", frame " << k << " from pid " << src;
    }
  }
}

// ---------------------------------------------------------------- a stranger's socket

class Socket {
 public:
  explicit Socket(int fd) : fd_(fd) {}
  Socket(Socket&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  int fd() const { return fd_; }

 private:
  int fd_;
};

sockaddr_in parse(const std::string& address) {
  auto colon = address.rfind(':');
  sockaddr_in target{};
  target.sin_family = AF_INET;
  target.sin_port = htons(static_cast<std::uint16_t>(std::stoi(address.substr(colon + 1))));
  ::inet_pton(AF_INET, address.substr(0, colon).c_str(), &target.sin_addr);
  return target;
}

Socket dial(const std::string& address) {
  Socket socket(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in target = parse(address);
  if (::connect(socket.fd(), reinterpret_cast<sockaddr*>(&target), sizeof target) != 0) {
    ADD_FAILURE() << "stranger cannot connect to " << address << ": " << std::strerror(errno);
  }
  return socket;
}

// Reads up to size bytes within timeout; fewer when the connection closes or time is up.
std::vector<std::byte> read_bytes(int fd, std::size_t size, std::chrono::milliseconds timeout) {
  std::vector<std::byte> bytes;
  auto deadline = Clock::now() + timeout;
  while (bytes.size() < size) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    pollfd waiter{fd, POLLIN, 0};
    if (left <= 0 || ::poll(&waiter, 1, static_cast<int>(left)) <= 0) break;
    std::byte chunk[64];
    ssize_t n = ::recv(fd, chunk, std::min(sizeof chunk, size - bytes.size()), 0);
    if (n <= 0) break;
    bytes.insert(bytes.end(), chunk, chunk + n);
  }
  return bytes;
}

// True when the other end closes fd (end of file or reset) within timeout, having sent
// nothing more.
bool closed_within(int fd, std::chrono::milliseconds timeout) {
  pollfd waiter{fd, POLLIN, 0};
  if (::poll(&waiter, 1, static_cast<int>(timeout.count())) <= 0) return false;
  std::byte byte;
  return ::recv(fd, &byte, 1, 0) <= 0;
}

void send_bytes(int fd, std::span<const std::byte> bytes) {
  ASSERT_EQ(::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL), static_cast<ssize_t>(bytes.size()));
}

// The handshake's layout (tcp_transport.cc): challenge = u32 job | i32 acceptor | 16 nonce;
// hello = i32 dialer | 16 nonce | u64 MAC(purpose | job | from | to | nonce | nonce).
std::uint64_t tag(const auth::Key& secret, std::string_view purpose, std::uint32_t job_id, int from, int to,
                  std::span<const std::byte> first, std::span<const std::byte> second) {
  std::array<std::byte, 12> fields;
  std::memcpy(fields.data(), &job_id, 4);
  std::memcpy(fields.data() + 4, &from, 4);
  std::memcpy(fields.data() + 8, &to, 4);
  return auth::mac(secret, {std::as_bytes(std::span(purpose.data(), purpose.size())), fields, first, second});
}

std::vector<std::byte> hello(int pid, std::span<const std::byte> challenge, const auth::Key& secret) {
  std::vector<std::byte> message(28);
  std::memcpy(message.data(), &pid, 4);
  auth::random_bytes(std::span(message.data() + 4, 16));
  int acceptor;
  std::memcpy(&acceptor, challenge.data() + 4, 4);
  std::uint64_t mac = tag(secret, "bsplib tcp hello", kJobId, pid, acceptor, challenge.subspan(8, 16),
                          std::span<const std::byte>(message.data() + 4, 16));
  std::memcpy(message.data() + 20, &mac, 8);
  return message;
}

// ---------------------------------------------------------------- tests

class TcpMesh : public testing::TestWithParam<int> {};

TEST_P(TcpMesh, SameSecretConnectsAndExchangesFrames) {
  Job job = make_job(GetParam());
  auto started = Clock::now();
  for (const std::string& error : connect(job)) ASSERT_EQ(error, "");
  EXPECT_LT(Clock::now() - started, 1s);
  for (const auto& member : job.members) {
    EXPECT_EQ(tcp_setup_stats(*member).refused_connections, 0u);
    EXPECT_EQ(tcp_setup_stats(*member).unproven_peers, 0u);
  }
  exchange(job, 400);  // megabytes per link: the kernel refuses part, queued tails follow
}

// 2 and 3 processes read each socket directly; 5 go through epoll.
INSTANTIATE_TEST_SUITE_P(Processes, TcpMesh, testing::Values(2, 3, 5));

TEST(TcpSetUp, DifferentSecretIsRefused) {
  Job job = make_job(2, 800, {key(1), key(2)});
  std::vector<std::string> errors = connect(job);
  EXPECT_NE(errors[0].find("tcp transport: pid 0 has no connection from pid 1 after 0.8 s"), std::string::npos)
      << errors[0];
  EXPECT_NE(errors[0].find("claiming pid 1 failed the job's secret"), std::string::npos) << errors[0];
  EXPECT_NE(errors[1].find("tcp transport: pid 1 has no connection to pid 0 after 0.8 s"), std::string::npos)
      << errors[1];
  EXPECT_GE(tcp_setup_stats(*job.members[0]).refused_connections, 1u);
}

TEST(TcpSetUp, SilentStrangersDoNotDelayThePeers) {
  Job job = make_job(3);
  // Half-open strangers: connected (the kernel completes them from the backlog), silent.
  std::vector<Socket> strangers;
  strangers.push_back(dial(job.addresses[0]));
  strangers.push_back(dial(job.addresses[0]));
  strangers.push_back(dial(job.addresses[1]));
  auto started = Clock::now();
  for (const std::string& error : connect(job)) ASSERT_EQ(error, "");
  auto took = Clock::now() - started;
  EXPECT_LT(took, 500ms) << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms";
  // Each was challenged, never adopted, and closed when set-up ended.
  for (const Socket& stranger : strangers) {
    EXPECT_EQ(read_bytes(stranger.fd(), 24, 1s).size(), 24u);
    EXPECT_TRUE(closed_within(stranger.fd(), 1s));
  }
  EXPECT_EQ(tcp_setup_stats(*job.members[0]).refused_connections, 2u);
  EXPECT_EQ(tcp_setup_stats(*job.members[1]).refused_connections, 1u);
  exchange(job, 10);
}

TEST(TcpSetUp, SilentStrangerIsClosedAfterTwoSeconds) {
  Job job = make_job(2);
  Socket stranger = dial(job.addresses[0]);
  std::jthread pid0([&] { connect(job, {0}); });
  auto started = Clock::now();
  EXPECT_EQ(read_bytes(stranger.fd(), 24, 1s).size(), 24u);
  EXPECT_TRUE(closed_within(stranger.fd(), 3s));
  auto took = Clock::now() - started;
  EXPECT_GT(took, 1500ms);
  EXPECT_LT(took, 2500ms);
  connect(job, {1});
  pid0.join();
  EXPECT_EQ(tcp_setup_stats(*job.members[0]).refused_connections, 1u);
  EXPECT_NE(tcp_setup_stats(*job.members[0]).last_refusal.find("said nothing"), std::string::npos);
  exchange(job, 5);
}

TEST(TcpSetUp, ForgedHelloClaimingPid1IsRefusedAndPid1IsAdopted) {
  Job job = make_job(2);
  std::vector<std::string> errors(2);
  std::jthread pid0([&] { errors[0] = connect(job, {0})[0]; });
  Socket stranger = dial(job.addresses[0]);
  std::vector<std::byte> challenge = read_bytes(stranger.fd(), 24, 2s);
  ASSERT_EQ(challenge.size(), 24u);
  std::uint32_t job_id;
  std::memcpy(&job_id, challenge.data(), 4);
  EXPECT_EQ(job_id, kJobId);
  // The stranger knows the job id and the layout, not the secret.
  send_bytes(stranger.fd(), hello(1, challenge, key(99)));
  EXPECT_TRUE(closed_within(stranger.fd(), 1s));
  errors[1] = connect(job, {1})[1];
  pid0.join();
  ASSERT_EQ(errors[0], "");
  ASSERT_EQ(errors[1], "");
  TcpSetupStats stats = tcp_setup_stats(*job.members[0]);
  EXPECT_EQ(stats.refused_connections, 1u);
  EXPECT_NE(stats.last_refusal.find("claiming pid 1 failed the job's secret"), std::string::npos) << stats.last_refusal;
  exchange(job, 20);  // pid 0's stream reaches the real pid 1
}

TEST(TcpSetUp, HelloForAnotherChallengeIsRefused) {
  // Even a hello made with the secret (one recorded on the wire) answers only the
  // challenge it was made for.
  Job job = make_job(2);
  std::jthread pid0([&] { connect(job, {0}); });
  Socket first = dial(job.addresses[0]);
  std::vector<std::byte> old_challenge = read_bytes(first.fd(), 24, 2s);
  ASSERT_EQ(old_challenge.size(), 24u);
  std::vector<std::byte> recorded = hello(1, old_challenge, key(1));
  Socket second = dial(job.addresses[0]);
  ASSERT_EQ(read_bytes(second.fd(), 24, 2s).size(), 24u);
  send_bytes(second.fd(), recorded);
  EXPECT_TRUE(closed_within(second.fd(), 1s));
  // A hello claiming a pid that never dials pid 0 (its own) is refused before any MAC.
  Socket third = dial(job.addresses[0]);
  std::vector<std::byte> third_challenge = read_bytes(third.fd(), 24, 2s);
  ASSERT_EQ(third_challenge.size(), 24u);
  send_bytes(third.fd(), hello(0, third_challenge, key(1)));
  EXPECT_TRUE(closed_within(third.fd(), 1s));
  EXPECT_EQ(connect(job, {1})[1], "");
  pid0.join();
  EXPECT_EQ(tcp_setup_stats(*job.members[0]).refused_connections, 3u);  // second, third, and first when set-up ended
  exchange(job, 5);
}

TEST(TcpSetUp, ImpostorAtAPeersAddressIsNotAdopted) {
  // Someone else listens where pid 1 expects pid 0: it challenges properly, but cannot
  // answer pid 1's hello with a welcome made with the secret.
  Socket listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener.fd(), reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(::listen(listener.fd(), 16), 0);
  socklen_t length = sizeof address;
  ::getsockname(listener.fd(), reinterpret_cast<sockaddr*>(&address), &length);
  Job job = make_job(2, 800);
  job.addresses[0] = "127.0.0.1:" + std::to_string(ntohs(address.sin_port));
  std::string error;
  std::jthread pid1([&] { error = connect(job, {1})[1]; });
  int answered = 0;
  for (auto until = Clock::now() + 2s; Clock::now() < until && answered < 3;) {
    pollfd waiter{listener.fd(), POLLIN, 0};
    if (::poll(&waiter, 1, 100) <= 0) continue;
    Socket connection(::accept4(listener.fd(), nullptr, nullptr, SOCK_CLOEXEC));
    std::array<std::byte, 24> challenge{};
    std::uint32_t job_id = kJobId;
    int pid = 0;
    std::memcpy(challenge.data(), &job_id, 4);
    std::memcpy(challenge.data() + 4, &pid, 4);
    auth::random_bytes(std::span(challenge.data() + 8, 16));
    send_bytes(connection.fd(), challenge);
    std::vector<std::byte> hello = read_bytes(connection.fd(), 28, 1s);
    if (hello.size() != 28u) {
      ADD_FAILURE() << "pid 1 sent " << hello.size() << " bytes of hello";
      break;
    }
    // pid 1's hello follows the documented layout.
    int dialer;
    std::uint64_t mac;
    std::memcpy(&dialer, hello.data(), 4);
    std::memcpy(&mac, hello.data() + 20, 8);
    EXPECT_EQ(dialer, 1);
    EXPECT_EQ(mac, tag(key(1), "bsplib tcp hello", kJobId, 1, 0, std::span(challenge).subspan(8, 16),
                       std::span<const std::byte>(hello.data() + 4, 16)));
    std::array<std::byte, 8> welcome{};
    send_bytes(connection.fd(), welcome);
    ++answered;
  }
  pid1.join();
  EXPECT_GE(answered, 1);
  EXPECT_NE(error.find("tcp transport: pid 1 has no connection to pid 0 after 0.8 s"), std::string::npos) << error;
  EXPECT_NE(error.find("welcome that fails the job's secret"), std::string::npos) << error;
  EXPECT_GE(tcp_setup_stats(*job.members[1]).unproven_peers, 1u);
}

TEST(TcpSetUp, DeadlineNamesTheMissingPids) {
  Job job = make_job(4, 500);
  auto started = Clock::now();
  std::vector<std::string> errors = connect(job, {0, 1});  // pids 2 and 3 never connect
  EXPECT_LT(Clock::now() - started, 2s);
  EXPECT_EQ(errors[0], "tcp transport: pid 0 has no connection from pids 2, 3 after 0.5 s");
  EXPECT_EQ(errors[1], "tcp transport: pid 1 has no connection from pids 2, 3 after 0.5 s");
}

// A peer goes away while this process only sends: the write side finds it (EPIPE or
// ECONNRESET, never SIGPIPE), wait_fd() says so, and receive() reports it once, after the
// frames the peer sent before going.
class TcpLoss : public testing::TestWithParam<int> {};

TEST_P(TcpLoss, WriteSideLossIsReported) {
  const int n = GetParam();
  const int gone = n - 1;
  Job job = make_job(n);
  for (const std::string& error : connect(job)) ASSERT_EQ(error, "");
  Transport& sender = *job.members[0];
  std::vector<std::byte> frame = test_frame(0, gone, 1);
  for (int k = 0; k < 3; ++k) {
    ASSERT_EQ(job.members[static_cast<std::size_t>(gone)]->send(0, test_frame(gone, 0, k)), SendStatus::sent);
    ASSERT_EQ(sender.send(gone, frame), SendStatus::sent);
  }
  ASSERT_TRUE(job.members[static_cast<std::size_t>(gone)]->flush());
  job.members[static_cast<std::size_t>(gone)].reset();  // closes with unread frames: a reset
  // Sending only, no receive(): the loss is found by send() (a send right after the
  // close may still succeed). The socket itself is readable too (the reset), so this
  // does not stop at wait_fd()'s readiness.
  for (int i = 0; i < 20; ++i) {
    sender.send(gone, frame);
    sender.flush();
    std::this_thread::sleep_for(1ms);
  }
  pollfd waiter{sender.wait_fd(), POLLIN, 0};
  EXPECT_EQ(::poll(&waiter, 1, 0), 1) << "wait_fd() must say a loss waits to be reported";
  Collect sink;
  sender.receive(sink, 64);
  ASSERT_EQ(sink.losses.size(), 1u);
  EXPECT_EQ(sink.losses[0].first, gone);
  EXPECT_NE(sink.losses[0].second.find("send: "), std::string::npos) << sink.losses[0].second;
  ASSERT_EQ(sink.frames.size(), 3u);  // delivered before the loss
  for (int k = 0; k < 3; ++k) EXPECT_EQ(sink.frames[static_cast<std::size_t>(k)].second, test_frame(gone, 0, k));
  // Once only; sends to the lost peer are dropped quietly.
  EXPECT_EQ(sender.send(gone, frame), SendStatus::sent);
  Collect again;
  sender.receive(again, 64);
  EXPECT_TRUE(again.losses.empty());
  EXPECT_EQ(::poll(&waiter, 1, 0), 0);
}

TEST_P(TcpLoss, ReadSideLossIsReportedOnce) {
  const int n = GetParam();
  const int gone = n - 1;
  Job job = make_job(n);
  for (const std::string& error : connect(job)) ASSERT_EQ(error, "");
  Transport& receiver = *job.members[0];
  ASSERT_EQ(job.members[static_cast<std::size_t>(gone)]->send(0, test_frame(gone, 0, 0)), SendStatus::sent);
  job.members[static_cast<std::size_t>(gone)].reset();
  Collect sink;
  for (auto until = Clock::now() + 2s; sink.losses.empty() && Clock::now() < until;) {
    pollfd waiter{receiver.wait_fd(), POLLIN, 0};
    ::poll(&waiter, 1, 100);
    receiver.receive(sink, 64);
  }
  ASSERT_EQ(sink.losses.size(), 1u);
  EXPECT_EQ(sink.losses[0].first, gone);
  ASSERT_EQ(sink.frames.size(), 1u);
  receiver.receive(sink, 64);
  EXPECT_EQ(sink.losses.size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(Processes, TcpLoss, testing::Values(2, 4));

TEST(TcpSetUp, EveryDescriptorClosesOnExec) {
  std::set<int> before;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    before.insert(std::stoi(entry.path().filename().string()));
  }
  Job job = make_job(4);
  for (const std::string& error : connect(job)) ASSERT_EQ(error, "");
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    int fd = std::stoi(entry.path().filename().string());
    if (before.count(fd)) continue;
    int flags = ::fcntl(fd, F_GETFD);
    if (flags < 0) continue;  // the directory iterator's own descriptor, gone by now
    EXPECT_TRUE(flags & FD_CLOEXEC) << "descriptor " << fd << " -> " << std::filesystem::read_symlink(entry.path());
    ++checked;
  }
  EXPECT_GE(checked, 4 * (3 + 2));  // per member: 3 sockets, epoll, eventfd
}

}  // namespace
}  // namespace bsp::transport
