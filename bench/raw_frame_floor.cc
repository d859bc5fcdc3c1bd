// bench/raw_frame_floor.cc: the bare raw-frame stream of this machine, the floor a large
// bsp_put over the nic transport is compared with. One process sends `--total` bytes as
// raw Ethernet frames of `--mtu` bytes (after the 14-byte header) on an AF_PACKET socket,
// `--batch` frames per sendmmsg; a forked receiver takes them from a TPACKET_V2 receive
// ring (`--rx=ring`, read in place, as nic's default) or by recvmmsg into its own buffers
// (`--rx=recv`, one copy in the receiver). Nothing is acknowledged, so frames the receiver
// cannot keep up with are lost: the figure is delivered bytes over the time from the
// first send to the last frame received (GB/s, best and median of --repetitions), and
// the share lost. `--bypass=1` sets PACKET_QDISC_BYPASS on the sender.
// With `--netns=PREFIX` the two ends are two emulated hosts of tools/cluster.sh: the
// receiver on PREFIX1's eth0, the sender on PREFIX0's, frames addressed to the receiver's
// MAC across the switch, the path the nic transport takes between those hosts.
// `--source=buffer` sends each frame from its own slice of a run-sized buffer (header
// gathered in front, as nic sends a pool frame) instead of one frame hot in cache;
// `--wait=spin` has the receiver yield instead of sleeping in poll while its ring is empty.
// The bare receiver reads only each frame's 8-byte run tag and never its payload;
// `--deliver=copy` has it copy every payload to its place in a destination of the run's
// size, the least a receiver that delivers the bytes must do (nic's also checks the MAC).
// Every wait is bounded and names what it waits for; the receiver dies with the sender.
// Run (root): bazel-bin/bench/raw_frame_floor [--iface=lo] [--mtu=65535|1500]
//      [--total=268435456] [--repetitions=5] [--batch=32] [--rx=ring|recv] [--csv=1]
//      [--netns=PREFIX] [--source=one|buffer] [--wait=poll|spin] [--deliver=none|copy]
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
#include <fcntl.h>
#include <sched.h>
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
// The receiver's set-up (socket, 32 MiB ring) and its count of a run, and the sender's
// wait for send budget, end the program past this long: generous against the
// milliseconds they take, short against a benchmark run.
constexpr int kPatienceMs = 30000;

void die(const char* what) {
  fmt::print(stderr, "raw_frame_floor: {}: {}\n", what, std::strerror(errno));
  std::exit(1);
}

long long now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

// Blocks until fd is readable; exits with the receiver's fate when the receiver process ended
// first (it could not open its socket, or was killed): the pipes it shares stay open here.
// Past kPatienceMs it kills the receiver and exits, naming `what` it waited for.
void await_receiver(int fd, pid_t receiver, const char* what) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(kPatienceMs);
  for (;;) {
    pollfd readable{fd, POLLIN, 0};
    if (::poll(&readable, 1, 200) == 1) return;
    int status = 0;
    if (::waitpid(receiver, &status, WNOHANG) == receiver) {
      fmt::print(stderr, "raw_frame_floor: the receiver (pid {}) ended ({} {}) before {}\n", receiver,
                 WIFEXITED(status) ? "exit" : "signal", WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
                 what);
      std::exit(1);
    }
    if (Clock::now() > deadline) {
      ::kill(receiver, SIGKILL);
      fmt::print(stderr, "raw_frame_floor: waited {} ms for {} (receiver pid {}); gave up\n", kPatienceMs, what,
                 receiver);
      std::exit(1);
    }
  }
}

// Moves this process into network namespace `name` (/var/run/netns/NAME, tools/cluster.sh).
void enter_netns(const std::string& name) {
  std::string path = "/var/run/netns/" + name;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || ::setns(fd, CLONE_NEWNET) != 0) die(("entering network namespace " + path).c_str());
  ::close(fd);
}

// The interface as this process's namespace sees it: index, MTU, MAC; refuses a missing
// or down interface up front (no frame would arrive).
struct Link {
  int index = 0;
  int mtu = 1500;
  unsigned char mac[6] = {};
};
Link find_link(const std::string& iface, const char* side) {
  Link link;
  link.index = static_cast<int>(::if_nametoindex(iface.c_str()));
  if (link.index == 0) die(fmt::format("{}: no interface {}", side, iface).c_str());
  int query = ::socket(AF_INET, SOCK_DGRAM, 0);
  ifreq request{};
  std::strncpy(request.ifr_name, iface.c_str(), IFNAMSIZ - 1);
  if (::ioctl(query, SIOCGIFMTU, &request) == 0) link.mtu = request.ifr_mtu;
  if (::ioctl(query, SIOCGIFHWADDR, &request) == 0) std::memcpy(link.mac, request.ifr_hwaddr.sa_data, 6);
  if (::ioctl(query, SIOCGIFFLAGS, &request) == 0 && (request.ifr_flags & IFF_UP) == 0) {
    fmt::print(stderr, "raw_frame_floor: {}: interface {} is down: no frame would arrive\n", side, iface);
    std::exit(1);
  }
  ::close(query);
  return link;
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
                        "  --source=one|buffer every frame from one buffer (hot in cache), or each from its\n"
                        "                      own slice of a buffer of --total bytes, gathered behind the\n"
                        "                      header as nic gathers a pool frame\n"
                        "  --wait=poll|spin    the receiver, when its ring is empty, sleeps in poll (default)\n"
                        "                      or yields, as nic waits within a superstep: no frame then\n"
                        "                      costs the sender's CPU a wake-up of the receiver\n"
                        "  --deliver=none|copy the receiver reads each frame's tag only (default), or also\n"
                        "                      copies its payload to its place in a destination of the\n"
                        "                      run's size, as a receiver delivering the bytes must\n"
                        "  --netns=PREFIX      receiver on host PREFIX1's --iface (default eth0), sender on\n"
                        "                      PREFIX0's: two emulated hosts of tools/cluster.sh\n"
                        "  --csv=1             one CSV row: iface,mtu,rx,best_GBps,median_GBps,lost_share\n")) {
    return 0;
  }
  bench::Flags flags(argc, argv);
  const std::string netns = flags.text("netns", "");
  const std::string iface = flags.text("iface", netns.empty() ? "lo" : "eth0");
  const std::size_t total = static_cast<std::size_t>(flags.number("total", 256L << 20));
  const int repetitions = static_cast<int>(flags.number("repetitions", 5));
  const std::size_t batch = static_cast<std::size_t>(std::clamp<long>(flags.number("batch", 32), 1, 1024));
  const bool ring = flags.text("rx", "ring") == "ring";
  const bool bypass = flags.text("bypass", "0") != "0";
  const std::string wait = flags.text("wait", "poll"), source_flag = flags.text("source", "one");
  const std::string deliver = flags.text("deliver", "none");
  if ((wait != "poll" && wait != "spin") || (source_flag != "one" && source_flag != "buffer") ||
      (deliver != "none" && deliver != "copy")) {
    fmt::print(stderr,
               "raw_frame_floor: --wait={} --source={} --deliver={}: want poll or spin, one or buffer, none or copy\n",
               wait, source_flag, deliver);
    return 2;
  }
  const bool copy_out = deliver == "copy";
  const bool spin = wait == "spin";
  const bool spread = source_flag == "buffer";
  const bool csv = flags.text("csv", "0") != "0";

  // Both ends see the interface in their own namespace; they agree on the frame size
  // through the flags and the sender's view of the MTU (the hosts' links share one MTU).
  if (!netns.empty()) enter_netns(netns + "0");
  const Link sending = find_link(iface, "sender");
  const int link_mtu = sending.mtu;
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
    if (!netns.empty()) enter_netns(netns + "1");
    const Link receiving = netns.empty() ? sending : find_link(iface, "receiver");
    int fd = open_bound(receiving.index, type);
    Receiver receiver(fd, ring, frame);
    // --deliver=copy: each payload after the run tag goes to the next slice, in arrival
    // order (one path: frames arrive in the order sent).
    constexpr std::size_t kTagged = kEthernetHeader + 8;
    const std::size_t slice = frame - kTagged;
    std::vector<std::byte> destination(copy_out ? frames * slice : 0);
    // Ready, and the MAC the frames are to carry to reach this end across the switch.
    if (::write(ready[1], receiving.mac, 6) != 6) die("write");
    for (int repetition = 0; repetition < repetitions; ++repetition) {
      std::uint64_t got = 0, bytes = 0;
      long long last = 0;
      Run run{};
      bool told = false;
      long long told_ns = 0;
      for (;;) {
        bool any = false;
        receiver.drain([&](const std::byte* data, std::size_t size) {
          any = true;
          std::uint64_t tag = 0;
          if (size >= kEthernetHeader + 8) std::memcpy(&tag, data + kEthernetHeader, 8);
          if (tag != static_cast<std::uint64_t>(repetition) + 1) return;
          if (copy_out && size == frame && got < frames) {
            std::memcpy(destination.data() + got * slice, data + kTagged, slice);
          }
          ++got;
          bytes += size - kEthernetHeader;
          last = now_ns();
        });
        if (!told) {
          pollfd reports{report[0], POLLIN, 0};
          if (::poll(&reports, 1, 0) == 1) {
            if (::read(report[0], &run, sizeof run) != sizeof run) die("read");
            told = true;
            told_ns = now_ns();
          }
        }
        if (told && got >= run.frames) break;
        if (spin) {
          // As the nic transport waits while a superstep's frames arrive: yielding, never
          // asleep, so no frame costs the sender's CPU a wake-up of this process.
          if (!any) {
            if (told && now_ns() - std::max(last, told_ns) > kIdleMs * 1000000LL) break;
            ::sched_yield();
          }
          continue;
        }
        pollfd readable{fd, POLLIN, 0};
        if (::poll(&readable, 1, told ? kIdleMs : 1000) == 0 && told) break;
      }
      // The copies are the work measured: keep the compiler from dropping them as unread.
      if (copy_out) asm volatile("" : : "r"(destination.data()) : "memory");
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
  unsigned char destination[6] = {};
  await_receiver(ready[0], child, "the receiver's socket and ring");
  if (::read(ready[0], destination, 6) != 6) die("read");
  int fd = ::socket(AF_PACKET, SOCK_RAW, 0);
  if (fd < 0) die("AF_PACKET socket (needs CAP_NET_RAW)");
  int sndbuf = 4 << 20;  // as nic's default
  ::setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf, sizeof sndbuf);
  timeval patience{1, 0};  // a blocked send returns to check the bound above
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &patience, sizeof patience);
  if (bypass) {
    int one = 1;
    if (::setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof one) != 0) die("PACKET_QDISC_BYPASS");
  }
  sockaddr_ll to{};
  to.sll_family = AF_PACKET;
  to.sll_ifindex = sending.index;
  to.sll_halen = 6;
  std::vector<std::byte> payload(frame, std::byte{0x5a});
  std::memcpy(payload.data(), destination, 6);
  std::memcpy(payload.data() + 6, sending.mac, 6);
  payload[12] = std::byte{static_cast<std::uint8_t>(type >> 8)};
  payload[13] = std::byte{static_cast<std::uint8_t>(type & 0xff)};
  // --source=buffer: each frame gathers the header and run tag (shared) and its own
  // slice of a buffer as large as a run, as nic gathers its header and a pool frame: the
  // kernel reads a run's worth of distinct memory, not one frame kept hot in cache.
  constexpr std::size_t kHead = kEthernetHeader + 8;
  const std::size_t slice = frame - kHead;
  std::vector<std::byte> source(spread ? frames * slice : 0, std::byte{0x5a});
  std::vector<iovec> iov(2 * batch);
  std::vector<mmsghdr> messages(batch);
  for (std::size_t i = 0; i < batch; ++i) {
    messages[i].msg_hdr.msg_name = &to;
    messages[i].msg_hdr.msg_namelen = sizeof to;
    messages[i].msg_hdr.msg_iov = &iov[2 * i];
    if (spread) {
      iov[2 * i] = {payload.data(), kHead};
      messages[i].msg_hdr.msg_iovlen = 2;
    } else {
      iov[2 * i] = {payload.data(), frame};
      messages[i].msg_hdr.msg_iovlen = 1;
    }
  }
  std::vector<double> rates, losses;
  for (int repetition = 0; repetition < repetitions; ++repetition) {
    std::uint64_t tag = static_cast<std::uint64_t>(repetition) + 1;
    std::memcpy(payload.data() + kEthernetHeader, &tag, 8);
    Run run{now_ns(), 0};
    auto progress = Clock::now();
    while (run.frames < frames) {
      unsigned count = static_cast<unsigned>(std::min<std::uint64_t>(batch, frames - run.frames));
      for (unsigned i = 0; spread && i < count; ++i) iov[2 * i + 1] = {source.data() + (run.frames + i) * slice, slice};
      int sent = ::sendmmsg(fd, messages.data(), count, 0);  // blocking (SO_SNDTIMEO): waits for send budget
      if (sent < 0) {
        if (errno != EINTR && errno != ENOBUFS && errno != EAGAIN) die("sendmmsg");
        if (Clock::now() - progress > std::chrono::milliseconds(kPatienceMs)) {
          ::kill(child, SIGKILL);
          fmt::print(stderr, "raw_frame_floor: {} took no frame for {} ms (run {}, {} of {} frames sent)\n", iface,
                     kPatienceMs, repetition + 1, run.frames, frames);
          return 1;
        }
        continue;
      }
      run.frames += static_cast<std::uint64_t>(sent);
      progress = Clock::now();
    }
    if (::write(report[1], &run, sizeof run) != sizeof run) die("write");
    double out[2];
    await_receiver(result[0], child, fmt::format("the receiver's count of run {}", repetition + 1).c_str());
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
        "raw frames on {}{}: {} bytes each (+14){}, rx={}{}{}: best {:.2f} GB/s, median {:.2f} GB/s delivered, "
        "median {:.1f}% lost\n",
        iface, netns.empty() ? "" : fmt::format(" from {}0 to {}1", netns, netns), mtu,
        spread ? " from a buffer of the run's size" : "", ring ? "ring" : "recv",
        copy_out ? ", payloads copied out" : "", bypass ? ", qdisc bypass" : "", best, median, lost * 100);
  }
  return 0;
}
