// bench/tcp_stream_floor.cc: the bare TCP stream of this machine, the floor a large
// bsp_put over tcp is compared with: one process writes `--total` bytes in
// writes of `--chunk` bytes over a loopback (or --host) connection, the other reads them;
// GB/s from the first write to the reader's last byte, best and median of --repetitions.
// `--zerocopy=1` sends with MSG_ZEROCOPY (SO_ZEROCOPY, completions reaped from the error
// queue) to see whether it pays here: on loopback the kernel copies anyway.
// Run: bazel-bin/bench/tcp_stream_floor [--chunk=65536] [--total=268435456]
//      [--repetitions=5] [--zerocopy=1] [--csv=1]
#include <arpa/inet.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
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

namespace {

using Clock = std::chrono::steady_clock;

void die(const char* what) {
  fmt::print(stderr, "tcp_stream_floor: {}: {}\n", what, std::strerror(errno));
  std::exit(1);
}

// Reaps MSG_ZEROCOPY completions without blocking; returns how many sends completed.
std::size_t reap_completions(int fd) {
  std::size_t done = 0;
  for (;;) {
    char control[128];
    msghdr message{};
    message.msg_control = control;
    message.msg_controllen = sizeof control;
    if (::recvmsg(fd, &message, MSG_ERRQUEUE | MSG_DONTWAIT) < 0) return done;
    for (cmsghdr* c = CMSG_FIRSTHDR(&message); c; c = CMSG_NXTHDR(&message, c)) {
      auto* error = reinterpret_cast<sock_extended_err*>(CMSG_DATA(c));
      if (error->ee_origin == SO_EE_ORIGIN_ZEROCOPY) done += error->ee_data - error->ee_info + 1;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (bench::wants_help(argc, argv,
                        "usage: bazel-bin/bench/tcp_stream_floor [options]\n"
                        "  The bare TCP stream over loopback: the floor of a large bsp_put over tcp, in GB/s.\n"
                        "  --chunk=65536 --total=268435456 --repetitions=5   write size, bytes per run, runs\n"
                        "  --zerocopy=1    send with MSG_ZEROCOPY\n"
                        "  --csv=1         one CSV row\n")) {
    return 0;
  }
  bench::Flags flags(argc, argv);
  const std::size_t chunk = static_cast<std::size_t>(flags.number("chunk", 65536));
  const std::size_t total = static_cast<std::size_t>(flags.number("total", 256L << 20));
  const int repetitions = static_cast<int>(flags.number("repetitions", 5));
  const bool zerocopy = flags.text("zerocopy", "0") != "0";
  const bool csv = flags.text("csv", "0") != "0";

  int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address) < 0) die("bind");
  socklen_t length = sizeof address;
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length);
  ::listen(listener, 1);
  std::vector<double> rates;
  for (int repetition = 0; repetition < repetitions; ++repetition) {
    int pipe_fds[2];
    if (::pipe(pipe_fds) < 0) die("pipe");
    pid_t reader = ::fork();
    if (reader == 0) {
      int fd = ::accept(listener, nullptr, nullptr);
      std::vector<char> buffer(1 << 20);
      std::size_t got = 0;
      while (got < total) {
        ssize_t n = ::recv(fd, buffer.data(), buffer.size(), 0);
        if (n <= 0) die("recv");
        got += static_cast<std::size_t>(n);
      }
      auto end = Clock::now().time_since_epoch().count();
      if (::write(pipe_fds[1], &end, sizeof end) != sizeof end) die("write");
      std::_Exit(0);
    }
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (zerocopy && ::setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof one) < 0) die("SO_ZEROCOPY");
    if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) < 0) die("connect");
    // Source data is rewritten between sends only after the kernel says it is done with
    // it (zerocopy); a ring of chunks keeps it simple: at most 64 sends in flight.
    const std::size_t ring = 64;
    std::vector<char> source(chunk * ring, 'x');
    std::size_t sends = 0, completed = 0;
    auto start = Clock::now();
    for (std::size_t sent = 0; sent < total;) {
      if (zerocopy) {
        completed += reap_completions(fd);
        if (sends - completed >= ring) continue;  // wait for the kernel to let go of a chunk
      }
      const char* from = source.data() + (sends % ring) * chunk;
      std::size_t size = std::min(chunk, total - sent);
      ssize_t n = ::send(fd, from, size, zerocopy ? MSG_ZEROCOPY : 0);
      if (n < 0) {
        if (errno == ENOBUFS) continue;
        die("send");
      }
      sent += static_cast<std::size_t>(n);
      ++sends;
    }
    long long end_ticks = 0;
    if (::read(pipe_fds[0], &end_ticks, sizeof end_ticks) != sizeof end_ticks) die("read");
    double seconds = std::chrono::duration<double>(Clock::time_point(Clock::duration(end_ticks)) - start).count();
    rates.push_back(static_cast<double>(total) / seconds / 1e9);
    ::close(fd);
    ::waitpid(reader, nullptr, 0);
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
  }
  std::sort(rates.begin(), rates.end());
  double best = rates.back(), median = rates[rates.size() / 2];
  if (csv) {
    fmt::print("tcp_stream,{},{},{:.3f},{:.3f}\n", chunk, zerocopy ? 1 : 0, best, median);
  } else {
    fmt::print("bare TCP stream on lo, {}-byte writes{}: {:.2f} GB/s best, {:.2f} median\n", chunk,
               zerocopy ? " (MSG_ZEROCOPY)" : "", best, median);
  }
  return 0;
}
