// bench/udp_stream_floor.cc: the bare UDP stream of this machine, the floor a large
// bsp_put over udp is compared with: one process sends `--total` bytes in datagrams of
// `--size` bytes (sendmmsg batches of --batch; --gso=1: runs of datagrams in one message
// the kernel segments, UDP_SEGMENT) to the other over loopback (or --host), which reads
// them (recvmmsg; --gro=1: the kernel may coalesce them, UDP_GRO). GB/s of bytes
// delivered, from the first send to the last datagram read, best and median of
// --repetitions. No checks, no copies beyond the kernel's: what the wire alone costs.
// Run: bazel-bin/bench/udp_stream_floor [--size=65000] [--total=268435456]
//      [--repetitions=5] [--batch=32] [--gso=0] [--gro=0] [--csv=1]
#include <arpa/inet.h>
#include <fcntl.h>
#include <sched.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "bench/bench_flags.h"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif

namespace {

using Clock = std::chrono::steady_clock;

void die(const char* what) {
  fmt::print(stderr, "udp_stream_floor: {}: {}\n", what, std::strerror(errno));
  std::exit(1);
}

int udp_socket(const char* host) {
  int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  if (fd < 0) die("socket");
  int buffer = 16 << 20;
  if (::setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buffer, sizeof buffer) != 0) {
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof buffer);
  }
  buffer = 4 << 20;
  if (::setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &buffer, sizeof buffer) != 0) {
    ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buffer, sizeof buffer);
  }
  sockaddr_in address{};
  address.sin_family = AF_INET;
  if (::inet_pton(AF_INET, host, &address.sin_addr) != 1) die("bad --host");
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) die("bind");
  return fd;
}

// Reads datagrams until `total` bytes came or the sender is done and nothing arrived for
// 200 ms; returns the bytes delivered and the time of the last one.
std::size_t drain(int fd, std::size_t total, long long& last_ticks) {
  constexpr std::size_t kCount = 16, kSlot = 65536;
  std::vector<char> storage(kCount * kSlot);
  iovec vectors[kCount];
  mmsghdr headers[kCount];
  std::size_t got = 0;
  while (got < total) {
    pollfd wait{fd, POLLIN, 0};
    if (::poll(&wait, 1, 200) == 0) break;  // the sender is long done: the rest was lost
    for (std::size_t i = 0; i < kCount; ++i) {
      vectors[i] = iovec{storage.data() + i * kSlot, kSlot};
      headers[i] = mmsghdr{};
      headers[i].msg_hdr.msg_iov = &vectors[i];
      headers[i].msg_hdr.msg_iovlen = 1;
    }
    int n = ::recvmmsg(fd, headers, kCount, MSG_DONTWAIT, nullptr);
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      die("recvmmsg");
    }
    for (int i = 0; i < n; ++i) got += headers[i].msg_len;
    last_ticks = Clock::now().time_since_epoch().count();
  }
  return got;
}

// Moves this process into network namespace `name` (/var/run/netns/NAME, tools/cluster.sh).
void enter_netns(const std::string& name) {
  std::string path = "/var/run/netns/" + name;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || ::setns(fd, CLONE_NEWNET) != 0) die(("entering network namespace " + path).c_str());
  ::close(fd);
}

}  // namespace

int main(int argc, char** argv) {
  if (bench::wants_help(
          argc, argv,
          "usage: bazel-bin/bench/udp_stream_floor [options]\n"
          "  The bare UDP stream over loopback: the floor of a large bsp_put over udp, in GB/s delivered.\n"
          "  --size=65000 --total=268435456 --repetitions=5   datagram size, bytes per run, runs\n"
          "  --batch=32      datagrams (or segmented messages) per sendmmsg (1 to 64)\n"
          "  --gso=1         send runs of datagrams as one segmented message (UDP_SEGMENT, <= 64 KiB)\n"
          "  --gro=1         let the kernel coalesce arriving datagrams (UDP_GRO)\n"
          "  --host=127.0.0.1  address both ends bind\n"
          "  --netns=PREFIX  receiver on host PREFIX1 (10.77.0.2), sender on PREFIX0 (10.77.0.1):\n"
          "                  two emulated hosts of tools/cluster.sh (root)\n"
          "  --csv=1         one CSV row: udp_stream,size,gso,gro,best,median,delivered share\n")) {
    return 0;
  }
  bench::Flags flags(argc, argv);
  const std::size_t size = static_cast<std::size_t>(flags.number("size", 65000));
  const std::size_t total = static_cast<std::size_t>(flags.number("total", 256L << 20));
  const int repetitions = static_cast<int>(flags.number("repetitions", 5));
  const bool gso = flags.text("gso", "0") != "0";
  const std::size_t batch = static_cast<std::size_t>(std::clamp<long>(flags.number("batch", 32), 1, 64));
  const bool gro = flags.text("gro", "0") != "0";
  const bool csv = flags.text("csv", "0") != "0";
  const std::string netns = flags.text("netns", "");
  const std::string receiver_host = netns.empty() ? flags.text("host", "127.0.0.1") : "10.77.0.2";
  const std::string sender_host = netns.empty() ? receiver_host : "10.77.0.1";
  if (size == 0 || size > 65507) {
    fmt::print(stderr, "udp_stream_floor: --size={} outside 1..65507\n", size);
    return 2;
  }
  // With GSO a message carries as many whole datagrams as fit 65507 bytes (at most 64).
  const std::size_t per_message = gso ? std::clamp<std::size_t>(65507 / size, 1, 64) : 1;

  std::vector<double> rates;
  double delivered_share = 1;
  for (int repetition = 0; repetition < repetitions; ++repetition) {
    int pipe_fds[2], port_fds[2];
    if (::pipe(pipe_fds) < 0 || ::pipe(port_fds) < 0) die("pipe");
    pid_t reader = ::fork();
    if (reader == 0) {
      if (!netns.empty()) enter_netns(netns + "1");
      int receiver_fd = udp_socket(receiver_host.c_str());
      int one = 1;
      if (gro && ::setsockopt(receiver_fd, SOL_UDP, UDP_GRO, &one, sizeof one) != 0) die("UDP_GRO");
      sockaddr_in bound{};
      socklen_t length = sizeof bound;
      ::getsockname(receiver_fd, reinterpret_cast<sockaddr*>(&bound), &length);
      if (::write(port_fds[1], &bound, sizeof bound) != sizeof bound) die("write");
      long long last = 0;
      std::size_t got = drain(receiver_fd, total, last);
      long long report[2] = {last, static_cast<long long>(got)};
      if (::write(pipe_fds[1], report, sizeof report) != sizeof report) die("write");
      std::_Exit(0);
    }
    sockaddr_in to{};
    if (::read(port_fds[0], &to, sizeof to) != sizeof to) die("read");
    if (repetition == 0 && !netns.empty()) enter_netns(netns + "0");
    int fd = udp_socket(sender_host.c_str());
    if (::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) die("connect");
    std::vector<char> source(size * per_message * batch, 'x');
    std::vector<iovec> vectors(batch);
    std::vector<mmsghdr> headers(batch);
    alignas(cmsghdr) char control[64][CMSG_SPACE(sizeof(std::uint16_t))];
    auto start = Clock::now();
    for (std::size_t sent = 0; sent < total;) {
      std::size_t messages = 0;
      for (; messages < batch && sent < total; ++messages) {
        std::size_t bytes = std::min(size * per_message, total - sent);
        vectors[messages] = iovec{source.data() + messages * size * per_message, bytes};
        headers[messages] = mmsghdr{};
        headers[messages].msg_hdr.msg_iov = &vectors[messages];
        headers[messages].msg_hdr.msg_iovlen = 1;
        if (per_message > 1 && bytes > size) {
          auto& slot = control[messages % 64];
          headers[messages].msg_hdr.msg_control = slot;
          headers[messages].msg_hdr.msg_controllen = sizeof slot;
          cmsghdr* c = CMSG_FIRSTHDR(&headers[messages].msg_hdr);
          c->cmsg_level = SOL_UDP;
          c->cmsg_type = UDP_SEGMENT;
          c->cmsg_len = CMSG_LEN(sizeof(std::uint16_t));
          auto segment = static_cast<std::uint16_t>(size);
          std::memcpy(CMSG_DATA(c), &segment, sizeof segment);
        }
        sent += bytes;
      }
      int n = ::sendmmsg(fd, headers.data(), static_cast<unsigned>(messages), 0);
      if (n < 0) {
        if (errno == ENOBUFS || errno == EINTR) {
          for (std::size_t i = 0; i < messages; ++i) sent -= vectors[i].iov_len;
          continue;
        }
        die("sendmmsg");
      }
      for (std::size_t i = static_cast<std::size_t>(n); i < messages; ++i) sent -= vectors[i].iov_len;
    }
    long long report[2] = {0, 0};
    if (::read(pipe_fds[0], report, sizeof report) != sizeof report) die("read");
    double seconds = std::chrono::duration<double>(Clock::time_point(Clock::duration(report[0])) - start).count();
    rates.push_back(static_cast<double>(report[1]) / seconds / 1e9);
    delivered_share = std::min(delivered_share, static_cast<double>(report[1]) / static_cast<double>(total));
    ::waitpid(reader, nullptr, 0);
    ::close(fd);
    for (int end : {pipe_fds[0], pipe_fds[1], port_fds[0], port_fds[1]}) ::close(end);
  }
  std::sort(rates.begin(), rates.end());
  double best = rates.back(), median = rates[rates.size() / 2];
  if (csv) {
    fmt::print("udp_stream,{},{},{},{:.3f},{:.3f},{:.3f}\n", size, gso ? 1 : 0, gro ? 1 : 0, best, median,
               delivered_share);
  } else {
    fmt::print("bare UDP stream, {}-byte datagrams{}{}: {:.2f} GB/s best, {:.2f} median delivered ({:.1f}% arrived)\n",
               size, gso ? ", UDP_SEGMENT" : "", gro ? ", UDP_GRO" : "", best, median, delivered_share * 100);
  }
  return 0;
}
