// bench/raw_frame_floor.cc: the bare raw-frame stream of this machine, the floor a large
// bsp_put over the nic transport is compared with. One process sends `--total` bytes as
// raw Ethernet frames of `--mtu` bytes (after the 14-byte header) on an AF_PACKET socket,
// `--batch` frames per sendmmsg; a forked receiver takes them from a TPACKET_V2 receive
// ring (`--rx=ring`, read in place, as nic's default) or by recvmmsg into its own buffers
// (`--rx=recv`, one copy in the receiver). Nothing is acknowledged, so frames the receiver
// cannot keep up with are lost: the figure is delivered bytes over the time from the
// first send to the last frame received (GB/s, best and median of --repetitions), and
// the share lost. `--bypass=1` sets PACKET_QDISC_BYPASS on the sender.
// Run (root): bazel-bin/bench/raw_frame_floor [--iface=lo] [--mtu=65535|1500]
//      [--total=268435456] [--repetitions=5] [--batch=32] [--rx=ring|recv] [--csv=1]
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <csignal>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench/bench_flags.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kEthernetHeader = 14;
constexpr std::size_t kRingBytes = 32u << 20;  // as nic's default receive ring
constexpr int kIdleMs = 50;                    // a receiver hearing nothing this long has it all

void die(const char* what) {
  fmt::print(stderr, "raw_frame_floor: {}: {}\n", what, std::strerror(errno));
  std::exit(1);
}

long long now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

// Blocks until fd is readable; exits with the receiver's fate when the receiver process ended
// first (it could not open its socket, or was killed): the pipes it shares stay open here.
void await_receiver(int fd, pid_t receiver) {
  for (;;) {
    pollfd readable{fd, POLLIN, 0};
    if (::poll(&readable, 1, 200) == 1) return;
    int status = 0;
    if (::waitpid(receiver, &status, WNOHANG) == receiver) {
      fmt::print(stderr, "raw_frame_floor: the receiver ended ({} {}) before reporting\n",
                 WIFEXITED(status) ? "exit" : "signal", WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
      std::exit(1);
    }
  }
}

// A packet socket bound to one EtherType on the interface.
int open_bound(int index, std::uint16_t type) {
  int fd = ::socket(AF_PACKET, SOCK_RAW, 0);
  if (fd < 0) die("AF_PACKET socket (needs CAP_NET_RAW)");
  int one = 1;
  ::setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof one);
  sockaddr_ll address{};
  address.sll_family = AF_PACKET;
  address.sll_protocol = htons(type);
  address.sll_ifindex = index;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) die("bind");
  return fd;
}

struct Run {
  long long start_ns = 0;  // the sender's first send
  std::uint64_t frames = 0;
};

// Receives one run's frames (the first 8 payload bytes carry the run number); returns
// delivered bytes and the time of the last frame.
class Receiver {
 public:
  Receiver(int fd, bool ring, std::size_t frame) : fd_(fd), ring_(ring), frame_(frame) {
    int bytes = static_cast<int>(kRingBytes);
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof bytes);
    if (ring) {
      int version = TPACKET_V2;
      if (::setsockopt(fd, SOL_PACKET, PACKET_VERSION, &version, sizeof version) != 0) die("TPACKET_V2");
      slot_ = TPACKET_ALIGN(TPACKET_ALIGN(TPACKET2_HDRLEN + 16) + frame);
      std::size_t block = std::max<std::size_t>(1u << 20, std::bit_ceil(slot_));
      tpacket_req request{};
      request.tp_block_size = static_cast<unsigned>(block);
      request.tp_block_nr = static_cast<unsigned>(std::max<std::size_t>(1, kRingBytes / block));
      request.tp_frame_size = static_cast<unsigned>(slot_);
      request.tp_frame_nr = static_cast<unsigned>(block / slot_ * request.tp_block_nr);
      if (::setsockopt(fd, SOL_PACKET, PACKET_RX_RING, &request, sizeof request) != 0) die("PACKET_RX_RING");
      slots_ = request.tp_frame_nr;
      per_block_ = block / slot_;
      block_ = block;
      map_size_ = block * request.tp_block_nr;
      void* map = ::mmap(nullptr, map_size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      if (map == MAP_FAILED) die("mmap");
      map_ = static_cast<std::byte*>(map);
    } else {
      buffers_.resize(kBatch * frame);
      for (std::size_t i = 0; i < kBatch; ++i) {
        iov_[i] = {buffers_.data() + i * frame, frame};
        messages_[i].msg_hdr.msg_iov = &iov_[i];
        messages_[i].msg_hdr.msg_iovlen = 1;
      }
    }
  }

  // Takes what has arrived; calls take(frame) for each.
  template <typename Take>
  void drain(Take&& take) {
    if (ring_) {
      for (;;) {
        auto* header = reinterpret_cast<tpacket2_hdr*>(map_ + next_ / per_block_ * block_ + next_ % per_block_ * slot_);
        if (!(__atomic_load_n(&header->tp_status, __ATOMIC_ACQUIRE) & TP_STATUS_USER)) return;
        take(reinterpret_cast<const std::byte*>(header) + header->tp_mac, header->tp_snaplen);
        __atomic_store_n(&header->tp_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
        next_ = (next_ + 1) % slots_;
      }
    }
    for (;;) {
      int got = ::recvmmsg(fd_, messages_, kBatch, MSG_DONTWAIT, nullptr);
      if (got <= 0) return;
      for (int i = 0; i < got; ++i) take(buffers_.data() + i * frame_, messages_[i].msg_len);
    }
  }

 private:
  static constexpr std::size_t kBatch = 32;
  int fd_;
  bool ring_;
  std::size_t frame_;
  std::size_t slot_ = 0, slots_ = 0, per_block_ = 0, block_ = 0, next_ = 0, map_size_ = 0;
  std::byte* map_ = nullptr;
  std::vector<std::byte> buffers_;
  iovec iov_[kBatch]{};
  mmsghdr messages_[kBatch]{};
};

}  // namespace

int main(int argc, char** argv) {
  if (bench::wants_help(argc, argv,
                        "usage: bazel-bin/bench/raw_frame_floor [options]   (root: raw frames)\n"
                        "  The bare raw-frame stream: the floor of a large bsp_put over nic, in GB/s delivered.\n"
                        "  --iface=lo          interface\n"
                        "  --mtu=N             bytes per frame after the Ethernet header (default: the\n"
                        "                      interface's MTU, at most 65535)\n"
                        "  --total=268435456 --repetitions=5 --batch=32   bytes per run, runs, frames per sendmmsg\n"
                        "  --rx=ring|recv      receive from a TPACKET_V2 ring in place, or recvmmsg (a copy)\n"
                        "  --bypass=1          PACKET_QDISC_BYPASS on the sender\n"
                        "  --csv=1             one CSV row: iface,mtu,rx,best_GBps,median_GBps,lost_share\n")) {
    return 0;
  }
  bench::Flags flags(argc, argv);
  const std::string iface = flags.text("iface", "lo");
  const std::size_t total = static_cast<std::size_t>(flags.number("total", 256L << 20));
  const int repetitions = static_cast<int>(flags.number("repetitions", 5));
  const std::size_t batch = static_cast<std::size_t>(std::clamp<long>(flags.number("batch", 32), 1, 1024));
  const bool ring = flags.text("rx", "ring") == "ring";
  const bool bypass = flags.text("bypass", "0") != "0";
  const bool csv = flags.text("csv", "0") != "0";

  const int index = static_cast<int>(::if_nametoindex(iface.c_str()));
  if (index == 0) die(("no interface " + iface).c_str());
  int link_mtu = 1500;
  {
    int query = ::socket(AF_INET, SOCK_DGRAM, 0);
    ifreq request{};
    std::strncpy(request.ifr_name, iface.c_str(), IFNAMSIZ - 1);
    if (::ioctl(query, SIOCGIFMTU, &request) == 0) link_mtu = request.ifr_mtu;
    if (::ioctl(query, SIOCGIFFLAGS, &request) == 0 && (request.ifr_flags & IFF_UP) == 0) {
      fmt::print(stderr, "raw_frame_floor: interface {} is down: no frame would arrive\n", iface);
      return 1;
    }
    ::close(query);
  }
  const std::size_t mtu = static_cast<std::size_t>(
      std::clamp<long>(flags.number("mtu", std::min(link_mtu, 65535)), 64, std::min(link_mtu, 65535)));
  const std::size_t frame = kEthernetHeader + mtu;
  const std::uint64_t frames = std::max<std::uint64_t>(1, total / mtu);
  // A type of its own (below nic's 0xB500 range on lo), by pid: runs side by side do not meet.
  const auto type = static_cast<std::uint16_t>(0xB400 + ::getpid() % 256);

  int ready[2], report[2], result[2];
  if (::pipe(ready) != 0 || ::pipe(report) != 0 || ::pipe(result) != 0) die("pipe");
  pid_t child = ::fork();
  if (child < 0) die("fork");
  if (child == 0) {  // the receiver
    // It waits for frames as long as the sender runs, and not longer: a sender that
    // stops (a down interface, a signal) must not leave it holding its caller's pipes.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() == 1) std::_Exit(1);
    int fd = open_bound(index, type);
    Receiver receiver(fd, ring, frame);
    char go = 1;
    if (::write(ready[1], &go, 1) != 1) die("write");
    for (int repetition = 0; repetition < repetitions; ++repetition) {
      std::uint64_t got = 0, bytes = 0;
      long long last = 0;
      Run run{};
      bool told = false;
      for (;;) {
        receiver.drain([&](const std::byte* data, std::size_t size) {
          std::uint64_t tag = 0;
          if (size >= kEthernetHeader + 8) std::memcpy(&tag, data + kEthernetHeader, 8);
          if (tag != static_cast<std::uint64_t>(repetition) + 1) return;
          ++got;
          bytes += size - kEthernetHeader;
          last = now_ns();
        });
        if (!told) {
          pollfd reports{report[0], POLLIN, 0};
          if (::poll(&reports, 1, 0) == 1) {
            if (::read(report[0], &run, sizeof run) != sizeof run) die("read");
            told = true;
          }
        }
        if (told && got >= run.frames) break;
        pollfd readable{fd, POLLIN, 0};
        if (::poll(&readable, 1, told ? kIdleMs : 1000) == 0 && told) break;
      }
      double seconds = static_cast<double>(last - run.start_ns) / 1e9;
      double rate = got == 0 || seconds <= 0 ? 0 : static_cast<double>(bytes) / seconds / 1e9;
      double lost = run.frames == 0 ? 0 : 1.0 - static_cast<double>(got) / static_cast<double>(run.frames);
      double out[2] = {rate, lost};
      if (::write(result[1], out, sizeof out) != sizeof out) die("write");
      char next = 0;
      if (::read(ready[0], &next, 1) != 1) die("read");  // the sender waits for this before its next run
    }
    std::_Exit(0);
  }
  char go = 0;
  await_receiver(ready[0], child);
  if (::read(ready[0], &go, 1) != 1) die("read");
  int fd = ::socket(AF_PACKET, SOCK_RAW, 0);
  if (fd < 0) die("AF_PACKET socket (needs CAP_NET_RAW)");
  int sndbuf = 4 << 20;  // as nic's default
  ::setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf, sizeof sndbuf);
  if (bypass) {
    int one = 1;
    if (::setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof one) != 0) die("PACKET_QDISC_BYPASS");
  }
  sockaddr_ll to{};
  to.sll_family = AF_PACKET;
  to.sll_ifindex = index;
  to.sll_halen = 6;
  std::vector<std::byte> payload(frame, std::byte{0x5a});
  payload[12] = std::byte{static_cast<std::uint8_t>(type >> 8)};
  payload[13] = std::byte{static_cast<std::uint8_t>(type & 0xff)};
  std::vector<iovec> iov(batch, iovec{payload.data(), frame});
  std::vector<mmsghdr> messages(batch);
  for (std::size_t i = 0; i < batch; ++i) {
    messages[i].msg_hdr.msg_name = &to;
    messages[i].msg_hdr.msg_namelen = sizeof to;
    messages[i].msg_hdr.msg_iov = &iov[i];
    messages[i].msg_hdr.msg_iovlen = 1;
  }
  std::vector<double> rates, losses;
  for (int repetition = 0; repetition < repetitions; ++repetition) {
    std::uint64_t tag = static_cast<std::uint64_t>(repetition) + 1;
    std::memcpy(payload.data() + kEthernetHeader, &tag, 8);
    Run run{now_ns(), 0};
    while (run.frames < frames) {
      unsigned count = static_cast<unsigned>(std::min<std::uint64_t>(batch, frames - run.frames));
      int sent = ::sendmmsg(fd, messages.data(), count, 0);  // blocking: waits for send budget
      if (sent < 0) {
        if (errno == EINTR || errno == ENOBUFS || errno == EAGAIN) continue;
        die("sendmmsg");
      }
      run.frames += static_cast<std::uint64_t>(sent);
    }
    if (::write(report[1], &run, sizeof run) != sizeof run) die("write");
    double out[2];
    await_receiver(result[0], child);
    if (::read(result[0], out, sizeof out) != sizeof out) die("read");
    rates.push_back(out[0]);
    losses.push_back(out[1]);
    char next = 1;
    if (::write(ready[1], &next, 1) != 1) die("write");
  }
  ::waitpid(child, nullptr, 0);
  std::vector<double> sorted = rates;
  std::sort(sorted.begin(), sorted.end());
  double best = sorted.back(), median = sorted[sorted.size() / 2];
  std::sort(losses.begin(), losses.end());
  double lost = losses[losses.size() / 2];
  if (csv) {
    fmt::print("{},{},{},{:.3f},{:.3f},{:.3f}\n", iface, mtu, ring ? "ring" : "recv", best, median, lost);
  } else {
    fmt::print(
        "raw frames on {}: {} bytes each (+14), rx={}{}: best {:.2f} GB/s, median {:.2f} GB/s delivered, "
        "median {:.1f}% lost\n",
        iface, mtu, ring ? "ring" : "recv", bypass ? ", qdisc bypass" : "", best, median, lost * 100);
  }
  return 0;
}
