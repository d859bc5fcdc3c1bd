// experiments/wake_cost.cc: what scheduling costs when k processes share C cores (an input of
// the superstep model, experiments/sync_model.py). k processes exchange 16-byte UDP datagrams over 127.0.0.1
// (the kernel path of the udp transport, without BSPlib) in one of two patterns:
//   rounds  every process, in round j, sends to (i + 2^(j mod ⌈log₂ k⌉)) mod k and waits
//           for the message of round j from (i − 2^(j mod ⌈log₂ k⌉)): the sparse sync's
//           dissemination barrier, every process active at once
//   ring    one token passed i → i + 1: a hand-off's latency, one process active
//   alltoall  every process sends to every other, then waits for all k - 1 messages of the
//           round: the dense sync, k (k - 1) messages per round
// and one of three ways to wait:
//   spin    poll with MSG_DONTWAIT and sched_yield for --spin-us (100, BSPlib's default),
//           then block in poll(2): what bsplib's waits do
//   yield   never block (only sched_yield between polls)
//   block   block in poll(2) at once (--spin-us=0)
// Per (pattern, wait, k) one CSV row: microseconds per round on process 0 (ring: a round is
// the token's way round, k hops), the cost of a message (rounds: round time × C / k, the CPU
// of one message with all C cores busy; alltoall the same over k - 1 messages each; ring:
// one hop's latency), the CPU the processes used per message by getrusage, and context
// switches per process per round, voluntary (a block) and involuntary (preempted), from
// getrusage over the timed rounds. The cores used are the first --cpus of the allowed set.
// Run: bazel-bin/experiments/wake_cost [--procs=2,4,8,16,32,64,128,256] [--cpus=2]
//      [--patterns=rounds,ring] (or alltoall) [--waits=spin,yield,block] [--spin-us=100]
//      [--rounds=2000] [--budget-ms=500] [--warmup=50] [--touch-kib=0] [--scatter-pages=0]
//      [--walk-entries=0 --walk-stride=128] [--transport=udp|packet|tcp] [--packet-types=256]
//      [--netns=PREFIX --hosts=8 --sessions=1]
// --touch-kib=N makes each process read and write N KiB of its own memory per round (a
// working set that a switch between many processes evicts from the caches), sequentially:
// prefetched, and the page-table entries of neighbouring pages share cache lines.
// --scatter-pages=N makes it read and write one cache line, at a random offset, in each of N
// pages of its own per round, the pages in a random order fixed per process: what state
// spread over N pages costs to fetch back (a page-table walk and a line per page, neither
// prefetched), as a library's per-peer and per-link structures on the heap are spread.
// --walk-entries=N [--walk-stride=128] makes it read one word of each of N entries of an
// array STRIDE bytes apart per round, in order: a walk over per-peer structures (a library's
// loop over all p peers), which a stride prefetcher may follow; the walk is timed by itself
// (walk_us_per_round: per process and round, the walk right after the round's wait).
// --transport=packet sends the messages as raw Ethernet frames on lo (the destination's
// EtherType, as the nic transport's, and its index after the header), each process receiving
// on a packet socket bound to its EtherType with a BPF filter on its index, as the nic
// transport does on lo (--packet-types=1: one EtherType for all, as before 2026-11-27, when
// the kernel offered every frame to all k sockets and their filters) (--transport=udp, the
// default: UDP datagrams).
// --transport=tcp runs the rounds over TCP connections on lo (TCP_NODELAY), one from each
// process to each of its ⌈log₂ k⌉ partners, each wait a poll on the one it expects: the tcp
// transport's kernel path in the sparse sync's pattern. The alltoall over tcp uses one
// connection per pair of processes, k - 1 in each (made by the processes themselves, each
// to its higher pids' listeners, after the fork), and waits on all of them through an epoll
// set, as the tcp transport does beyond 4 processes: the dense sync's kernel path, with the
// per-connection state a process of a p-process dense job holds.
// --netns=PREFIX [--hosts=8] places the k processes' sockets on the namespace hosts of
// tools/cluster.sh (PREFIX0 .. PREFIX(H-1), host h at 10.77.0.(h + 1)), spread evenly in
// blocks as experiments/sync_scaling.sh's host file spreads bsprun's processes: the messages
// between hosts cross veth, bridge and veth (the namespace cluster's path), and each host's
// processes run in a session of their own, as under the hosts' sshd (--sessions=0: one
// session for all). Needs root.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bench/bench_flags.h"
#include "transport/nic/ether_types.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Message {
  std::uint32_t magic, from, round, pad;
};
constexpr std::uint32_t kMagic = 0x77616b65;  // "wake"
constexpr int kWindow = 4096;                 // rounds a process can be ahead of another
constexpr std::size_t kFrameHeader = 14 + 4;  // Ethernet header, then the destination's index

struct Settings {
  std::string pattern, wait;
  int k, spin_us;
  long rounds, warmup;
  long touch_bytes;
  long scatter_pages;
  long walk_entries, walk_stride;
  std::string netns;  // empty: every socket on 127.0.0.1
  int hosts;
  bool sessions;     // on the cluster: a session (autogroup) per host
  bool packet;       // raw frames through packet sockets on lo, not UDP
  bool tcp;          // the rounds over TCP connections on lo, one per process and distance
  int packet_types;  // --transport=packet: 1 (every frame 0x88B5) or spread over this many
};

// The EtherType of frames to process i: as the nic transport on lo (nic/ether_types.h), one
// of 256 by the destination, so the kernel offers a frame only to the sockets bound to its
// type; --packet-types=1: 0x88B5 for all (the transport before 2026-11-27, every frame
// offered to all k sockets); N: spread over N types.
std::uint16_t packet_type(const Settings& s, int i) {
  using namespace bsp::transport::nic;
  return s.packet_types <= 1 ? kEtherType : static_cast<std::uint16_t>(kLoopbackEtherTypeBase + i % s.packet_types);
}

// --transport=tcp: process i's connection to (i + 2^j) mod k, and from (i - 2^j) mod k, per
// distance j of the rounds (made by the parent, inherited by the children).
std::vector<std::vector<int>> tcp_out, tcp_in;
// --transport=tcp --patterns=alltoall: process i's listener (made by the parent); the
// connections between each pair are made by the children (tcp_pairs below).
std::vector<int> tcp_listeners;
std::vector<sockaddr_in> tcp_listener_addresses;

// The rounds' distances 1, 2, 4 … 2^(r-1): r = ⌈log₂ k⌉ (at least 1), as the dissemination barrier's.
int rounds_of(int k) { return std::max(1, static_cast<int>(std::ceil(std::log2(k)))); }

struct Report {  // what a child sends back through its pipe
  double elapsed_us, user_us, system_us;
  long voluntary, involuntary;
  double walk_us;
};

[[noreturn]] void die(const char* what) {
  std::perror(what);
  _exit(2);
}

double tv_us(const timeval& tv) { return static_cast<double>(tv.tv_sec) * 1e6 + static_cast<double>(tv.tv_usec); }

// One process of the ring or the rounds: sockets[i] is its own (bound, non-blocking).
class Member {
 public:
  Member(int me, const Settings& s, const std::vector<int>& sockets, const std::vector<sockaddr_in>& addresses)
      : me_(me),
        s_(s),
        fd_(sockets[static_cast<std::size_t>(me)]),
        addresses_(addresses),
        arrived_(kWindow, 0),
        memory_(static_cast<std::size_t>(std::max(0L, s.touch_bytes)), 1),
        scattered_(static_cast<std::size_t>(std::max(0L, s.scatter_pages)) * kPage, 1),
        walked_(static_cast<std::size_t>(std::max(0L, s.walk_entries) * std::max(8L, s.walk_stride)), 1),
        yield_forever_(s.wait == "yield"),
        block_at_once_(s.wait == "block"),
        rounds_(rounds_of(s.k)),
        loopback_(s.packet ? static_cast<int>(if_nametoindex("lo")) : 0) {
    if (s.tcp && s.pattern == "alltoall") connect_pairs();
    // One line per page, at a random offset, the pages in a random order (fixed per process).
    std::mt19937 random(static_cast<unsigned>(me + 1));
    for (long page = 0; page < s.scatter_pages; ++page) {
      lines_.push_back(static_cast<std::size_t>(page) * kPage + (random() % (kPage / 64)) * 64);
    }
    std::shuffle(lines_.begin(), lines_.end(), random);
  }

  void send(int to, long round) {
    Message m{kMagic, static_cast<std::uint32_t>(me_), static_cast<std::uint32_t>(round), 0};
    if (s_.tcp) {
      // The pair's connection (alltoall), or the one of this round's distance, which goes there.
      int out = !pair_.empty() ? pair_[static_cast<std::size_t>(to)]
                               : tcp_out[static_cast<std::size_t>(me_)][static_cast<std::size_t>(round % rounds_)];
      while (::send(out, &m, sizeof m, MSG_NOSIGNAL) < 0) {
        if (errno != EAGAIN && errno != EINTR) die("wake_cost: send (tcp)");
        sched_yield();
      }
      return;
    }
    if (s_.packet) {
      unsigned char frame[kFrameHeader + sizeof m] = {};
      const std::uint16_t type = packet_type(s_, to);
      frame[12] = static_cast<unsigned char>(type >> 8);
      frame[13] = static_cast<unsigned char>(type & 0xFF);
      std::uint32_t index = htonl(static_cast<std::uint32_t>(to));
      std::memcpy(frame + 14, &index, sizeof index);
      std::memcpy(frame + kFrameHeader, &m, sizeof m);
      sockaddr_ll a{};
      a.sll_family = AF_PACKET;
      a.sll_protocol = htons(type);
      a.sll_ifindex = loopback_;
      a.sll_halen = 6;
      while (sendto(fd_, frame, sizeof frame, 0, reinterpret_cast<const sockaddr*>(&a), sizeof a) < 0) {
        if (errno != EAGAIN && errno != EINTR && errno != ENOBUFS) die("wake_cost: sendto (packet)");
        sched_yield();
      }
      return;
    }
    const sockaddr_in& a = addresses_[static_cast<std::size_t>(to)];
    while (sendto(fd_, &m, sizeof m, 0, reinterpret_cast<const sockaddr*>(&a), sizeof a) < 0) {
      if (errno != EAGAIN && errno != EINTR) die("wake_cost: sendto");
      sched_yield();
    }
  }

  // Reads every message waiting; true once round's message is here (then consumed).
  bool drain(long round) {
    if (!pair_.empty()) {  // fd_ is the epoll set: read each ready connection
      epoll_event ready[64];
      int n = epoll_wait(fd_, ready, 64, 0);
      if (n < 0 && errno != EINTR) die("wake_cost: epoll_wait");
      for (int e = 0; e < n; ++e) read_messages(ready[e].data.fd, round);
    } else {
      read_messages(fd_, round);
    }
    int& slot = arrived_[static_cast<std::size_t>(round % kWindow)];
    if (slot == 0) return false;
    --slot;
    return true;
  }

  // Every message waiting on socket fd, counted by its round.
  void read_messages(int fd, long round) {
    Message m;
    unsigned char frame[kFrameHeader + sizeof m + 64];
    for (;;) {
      ssize_t n = s_.packet ? recv(fd, frame, sizeof frame, MSG_DONTWAIT) : recv(fd, &m, sizeof m, MSG_DONTWAIT);
      if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK) break;
        if (errno == EINTR) continue;
        die("wake_cost: recv");
      }
      if (n == 0 && s_.tcp) {  // a peer done with its rounds closed: nothing more comes here
        if (!pair_.empty()) epoll_ctl(fd_, EPOLL_CTL_DEL, fd, nullptr);
        break;
      }
      if (s_.tcp && n > 0 && n < static_cast<ssize_t>(sizeof m)) {  // a message in pieces: the rest follows
        auto* bytes = reinterpret_cast<unsigned char*>(&m);
        while (n < static_cast<ssize_t>(sizeof m)) {
          ssize_t more = recv(fd, bytes + n, sizeof m - static_cast<std::size_t>(n), 0);
          if (more <= 0 && errno != EINTR && errno != EAGAIN) die("wake_cost: recv (tcp)");
          if (more > 0) n += more;
        }
      }
      if (s_.packet) {  // the frame's message, after its header
        if (n != static_cast<ssize_t>(kFrameHeader + sizeof m)) continue;
        std::memcpy(&m, frame + kFrameHeader, sizeof m);
        n = sizeof m;
      }
      // Anything not ours (size, magic, sender, a round out of the window) is dropped.
      if (n != sizeof m || m.magic != kMagic || m.from >= static_cast<std::uint32_t>(s_.k)) continue;
      if (static_cast<long>(m.round) < round || static_cast<long>(m.round) >= round + kWindow) continue;
      ++arrived_[m.round % kWindow];
    }
  }

  void wait_for(long round) {
    if (s_.tcp && pair_.empty()) {  // the message of this round comes on the connection of its distance
      fd_ = tcp_in[static_cast<std::size_t>(me_)][static_cast<std::size_t>(round % rounds_)];
    }
    if (drain(round)) return;
    if (!block_at_once_) {
      auto until = Clock::now() + std::chrono::microseconds(s_.spin_us);
      while (yield_forever_ || Clock::now() < until) {
        sched_yield();
        if (drain(round)) return;
      }
    }
    for (;;) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 10000) == 0) {
        std::fprintf(stderr, "wake_cost: process %d waited 10 s for round %ld\n", me_, round);
        _exit(3);
      }
      if (drain(round)) return;
    }
  }

  // alltoall over tcp: a connection to each higher pid's listener (saying who we are in
  // its first 4 bytes), one accepted from each lower pid, all in an epoll set that fd_
  // becomes.
  void connect_pairs() {
    const int k = s_.k;
    pair_.assign(static_cast<std::size_t>(k), -1);
    int one = 1;
    auto configure = [&](int fd) { setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one); };
    for (int j = me_ + 1; j < k; ++j) {
      int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      const sockaddr_in& a = tcp_listener_addresses[static_cast<std::size_t>(j)];
      if (fd < 0 || connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) < 0)
        die("wake_cost: tcp connect (pair)");
      configure(fd);
      std::uint32_t hello = static_cast<std::uint32_t>(me_);
      if (::send(fd, &hello, sizeof hello, MSG_NOSIGNAL) != sizeof hello) die("wake_cost: tcp hello");
      pair_[static_cast<std::size_t>(j)] = fd;
    }
    for (int accepted = 0; accepted < me_; ++accepted) {
      int fd = accept4(tcp_listeners[static_cast<std::size_t>(me_)], nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) die("wake_cost: tcp accept (pair)");
      configure(fd);
      std::uint32_t hello = 0;
      if (recv(fd, &hello, sizeof hello, MSG_WAITALL) != sizeof hello || hello >= static_cast<std::uint32_t>(me_) ||
          pair_[hello] >= 0) {
        die("wake_cost: tcp hello (pair)");
      }
      pair_[hello] = fd;
    }
    for (int listener : tcp_listeners) close(listener);
    fd_ = epoll_create1(EPOLL_CLOEXEC);
    if (fd_ < 0) die("wake_cost: epoll_create1");
    for (int fd : pair_) {
      if (fd < 0) continue;
      fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
      epoll_event e{};
      e.events = EPOLLIN;
      e.data.fd = fd;
      if (epoll_ctl(fd_, EPOLL_CTL_ADD, fd, &e) < 0) die("wake_cost: epoll_ctl");
    }
  }

  void touch() {
    for (std::size_t i = 0; i < memory_.size(); i += 64) memory_[i] = static_cast<char>(memory_[i] + 1);
    for (std::size_t at : lines_) scattered_[at] = static_cast<char>(scattered_[at] + 1);
    if (!walked_.empty()) {
      // Timed on its own (a few µs, rarely preempted): what the walk costs, without the noise
      // of the rest of the round.
      const std::size_t stride = static_cast<std::size_t>(std::max(8L, s_.walk_stride));
      auto begin = Clock::now();
      std::uint64_t sum = 0;
      for (std::size_t at = 0; at < walked_.size(); at += stride) {
        std::uint64_t word;
        std::memcpy(&word, &walked_[at], sizeof word);
        sum += word;
      }
      walk_sum_ = walk_sum_ + sum;  // kept, so the loads are not optimised away
      walk_us_ += std::chrono::duration<double, std::micro>(Clock::now() - begin).count();
    }
  }

  void step(long round) {
    const int k = s_.k;
    if (s_.pattern == "ring") {
      if (me_ == 0 && round > 0) wait_for(round - 1);  // the token's way round
      if (me_ != 0) wait_for(round);
      touch();
      send((me_ + 1) % k, round);
      return;
    }
    if (s_.pattern == "alltoall") {  // the dense sync: a message to every other, then all of theirs
      touch();
      for (int d = 1; d < k; ++d) send((me_ + d) % k, round);
      for (int d = 1; d < k; ++d) wait_for(round);
      return;
    }
    const int distance = 1 << (round % rounds_);
    touch();
    send((me_ + distance) % k, round);
    wait_for(round);
  }

  Report run() {
    for (long j = 0; j < s_.warmup; ++j) step(j);
    walk_us_ = 0;
    rusage before{}, after{};
    getrusage(RUSAGE_SELF, &before);
    auto start = Clock::now();
    for (long j = s_.warmup; j < s_.warmup + s_.rounds; ++j) step(j);
    if (s_.pattern == "ring" && me_ == 0) wait_for(s_.warmup + s_.rounds - 1);
    auto end = Clock::now();
    getrusage(RUSAGE_SELF, &after);
    return {std::chrono::duration<double, std::micro>(end - start).count(),
            tv_us(after.ru_utime) - tv_us(before.ru_utime),
            tv_us(after.ru_stime) - tv_us(before.ru_stime),
            after.ru_nvcsw - before.ru_nvcsw,
            after.ru_nivcsw - before.ru_nivcsw,
            walk_us_};
  }

 private:
  int me_;
  const Settings& s_;
  int fd_;
  const std::vector<sockaddr_in>& addresses_;
  std::vector<int> arrived_;
  std::vector<char> memory_;
  static constexpr std::size_t kPage = 4096;
  std::vector<char> scattered_;
  std::vector<std::size_t> lines_;  // offsets into scattered_: one line in each page
  std::vector<char> walked_;
  volatile std::uint64_t walk_sum_ = 0;
  double walk_us_ = 0;  // time spent in the walks of the timed rounds
  bool yield_forever_, block_at_once_;
  const int rounds_;       // the rounds' distances: rounds_of(k)
  int loopback_;           // --transport=packet: lo's interface index
  std::vector<int> pair_;  // alltoall over tcp: the connection to each other process (-1: self)
};

// The host (0 .. hosts - 1) of process i of k: blocks of ceil or floor(k / hosts), as
// experiments/sync_scaling.sh's host file gives host h (k + used - 1 - h) / used slots.
int host_of(int i, int k, int hosts) {
  const int used = std::min(k, hosts);
  int first = 0;
  for (int h = 0; h < used; ++h) {
    const int slots = (k + used - 1 - h) / used;
    if (i < first + slots) return h;
    first += slots;
  }
  return used - 1;
}

// Process i's packet socket on lo (--transport=packet), as the nic transport opens one: bound
// to the EtherType, with a filter passing only the frames whose index is i, not seeing its
// own sends, the filter attached before the bind so that nothing else is queued.
int packet_socket(const Settings& s, int i) {
  int fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) die("wake_cost: AF_PACKET socket (needs CAP_NET_RAW)");
  sock_filter code[] = {
      BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 12), BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, packet_type(s, i), 0, 3),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 14), BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<std::uint32_t>(i), 0, 1),
      BPF_STMT(BPF_RET | BPF_K, 262144),      BPF_STMT(BPF_RET | BPF_K, 0),
  };
  sock_fprog program{static_cast<unsigned short>(sizeof code / sizeof code[0]), code};
  if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &program, sizeof program) < 0) die("wake_cost: SO_ATTACH_FILTER");
  int one = 1;
  setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof one);
  int buffer = 4 << 20;
  if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buffer, sizeof buffer) < 0) {
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof buffer);
  }
  sockaddr_ll address{};
  address.sll_family = AF_PACKET;
  address.sll_protocol = htons(packet_type(s, i));
  address.sll_ifindex = static_cast<int>(if_nametoindex("lo"));
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) < 0) die("wake_cost: bind (packet)");
  return fd;
}

// A TCP listener on lo with room for `backlog` connections not yet accepted; *address
// becomes its address.
int tcp_listener(int backlog, sockaddr_in* address) {
  int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof a;
  if (listener < 0 || bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a) < 0 || listen(listener, backlog) < 0 ||
      getsockname(listener, reinterpret_cast<sockaddr*>(&a), &length) < 0) {
    die("wake_cost: tcp listener");
  }
  *address = a;
  return listener;
}

// --transport=tcp: the rounds' connections, i -> (i + 2^j) mod k for each distance j, made on
// lo through one listener, TCP_NODELAY and non-blocking at both ends.
void tcp_connect(int k) {
  const int r = rounds_of(k);
  sockaddr_in a{};
  int listener = tcp_listener(64, &a);
  tcp_out.assign(static_cast<std::size_t>(k), std::vector<int>(static_cast<std::size_t>(r), -1));
  tcp_in = tcp_out;
  int one = 1;
  for (int i = 0; i < k; ++i) {
    for (int j = 0; j < r; ++j) {
      int out = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (out < 0 || connect(out, reinterpret_cast<sockaddr*>(&a), sizeof a) < 0) die("wake_cost: tcp connect");
      int in = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
      if (in < 0) die("wake_cost: tcp accept");
      for (int fd : {out, in}) {
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
      }
      tcp_out[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] = out;
      tcp_in[static_cast<std::size_t>((i + (1 << j)) % k)][static_cast<std::size_t>(j)] = in;
    }
  }
  close(listener);
}

// --transport=tcp --patterns=alltoall: a listener per process on lo, with room for all the
// connections made to it before it accepts (k - 1).
void tcp_listen_all(int k) {
  for (int i = 0; i < k; ++i) {
    sockaddr_in a{};
    tcp_listeners.push_back(tcp_listener(k, &a));
    tcp_listener_addresses.push_back(a);
  }
}

// Runs one configuration; false if a child failed.
bool measure(const Settings& s, int cpus, bool header, bool print = true) {
  std::vector<int> sockets;
  std::vector<sockaddr_in> addresses;
  // On the namespace cluster: each socket is made in its host's namespace (a socket stays in
  // the namespace it was made in, whichever process uses it), then back to ours.
  int home = -1;
  std::vector<int> namespaces;
  if (!s.netns.empty()) {
    home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
    if (home < 0) die("wake_cost: /proc/self/ns/net");
    for (int h = 0; h < s.hosts; ++h) {
      std::string path = "/var/run/netns/" + s.netns + std::to_string(h);
      int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) die(("wake_cost: " + path).c_str());
      namespaces.push_back(fd);
    }
  }
  for (int i = 0; i < s.k; ++i) {
    if (s.packet || s.tcp) {
      sockets.push_back(s.packet ? packet_socket(s, i) : -1);
      addresses.push_back(sockaddr_in{});
      continue;
    }
    const int host = home >= 0 ? host_of(i, s.k, s.hosts) : -1;
    if (host >= 0 && setns(namespaces[static_cast<std::size_t>(host)], CLONE_NEWNET) < 0) die("wake_cost: setns");
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) die("wake_cost: socket");
    // Room for every process's message of a round (alltoall: k - 1 waiting at once).
    int buffer = 4 << 20;
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buffer, sizeof buffer) < 0) {
      setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof buffer);
    }
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(host >= 0 ? (10u << 24 | 77u << 16 | static_cast<unsigned>(host + 1)) : INADDR_LOOPBACK);
    socklen_t length = sizeof a;
    if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) < 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&a), &length) < 0) {
      die("wake_cost: bind");
    }
    sockets.push_back(fd);
    addresses.push_back(a);
  }
  if (s.tcp && s.pattern == "alltoall") {
    tcp_listen_all(s.k);
  } else if (s.tcp) {
    tcp_connect(s.k);
  }
  if (home >= 0) {
    if (setns(home, CLONE_NEWNET) < 0) die("wake_cost: setns back");
    close(home);
    for (int fd : namespaces) close(fd);
  }
  // Every process writes its report into a pipe of its own. On the namespace cluster the
  // processes of one host are children of a leader that first starts a session of its own
  // (setsid), as sshd starts one per login: bsprun's processes on the cluster's hosts run in
  // one session, so one scheduler autogroup, per host, and the scheduler shares the cores
  // between those groups first (kernel.sched_autogroup_enabled).
  std::vector<int> pipes, writers;
  for (int i = 0; i < s.k; ++i) {
    int fds[2];
    if (pipe(fds) < 0) die("wake_cost: pipe");
    pipes.push_back(fds[0]);
    writers.push_back(fds[1]);
  }
  auto start_member = [&](int i) {
    pid_t child = fork();
    if (child < 0) die("wake_cost: fork");
    if (child == 0) {
      for (int fd : pipes) close(fd);
      Report report = Member(i, s, sockets, addresses).run();
      if (write(writers[static_cast<std::size_t>(i)], &report, sizeof report) != static_cast<ssize_t>(sizeof report)) {
        _exit(2);
      }
      _exit(0);
    }
    return child;
  };
  std::vector<pid_t> children;  // the members, or on the cluster the hosts' leaders
  if (s.netns.empty() || !s.sessions) {
    for (int i = 0; i < s.k; ++i) children.push_back(start_member(i));
  } else {
    for (int h = 0; h < std::min(s.k, s.hosts); ++h) {
      pid_t leader = fork();
      if (leader < 0) die("wake_cost: fork");
      if (leader == 0) {
        if (setsid() < 0) die("wake_cost: setsid");
        std::vector<pid_t> mine;
        for (int i = 0; i < s.k; ++i) {
          if (host_of(i, s.k, s.hosts) == h) mine.push_back(start_member(i));
        }
        bool all = true;
        for (pid_t child : mine) {
          int status = 0;
          waitpid(child, &status, 0);
          all = all && WIFEXITED(status) && WEXITSTATUS(status) == 0;
        }
        _exit(all ? 0 : 2);
      }
      children.push_back(leader);
    }
  }
  for (int fd : writers) close(fd);
  std::vector<Report> reports;
  bool ok = true;
  for (int i = 0; i < s.k; ++i) {
    Report r{};
    ok = read(pipes[static_cast<std::size_t>(i)], &r, sizeof r) == static_cast<ssize_t>(sizeof r) && ok;
    reports.push_back(r);
    close(pipes[static_cast<std::size_t>(i)]);
  }
  for (pid_t child : children) {
    int status = 0;
    waitpid(child, &status, 0);
    ok = ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  for (int fd : sockets) {
    if (fd >= 0) close(fd);
  }
  for (auto* side : {&tcp_out, &tcp_in}) {
    for (const std::vector<int>& fds : *side) {
      for (int fd : fds) close(fd);
    }
    side->clear();
  }
  for (int fd : tcp_listeners) close(fd);
  tcp_listeners.clear();
  tcp_listener_addresses.clear();
  if (!ok) {
    std::fprintf(stderr, "wake_cost: %s %s k=%d failed\n", s.pattern.c_str(), s.wait.c_str(), s.k);
    return false;
  }
  double per = reports[0].elapsed_us / static_cast<double>(s.rounds);
  double voluntary = 0, involuntary = 0, cpu = 0, walk = 0;
  for (const Report& r : reports) {
    walk += r.walk_us;
    voluntary += static_cast<double>(r.voluntary);
    involuntary += static_cast<double>(r.involuntary);
    cpu += r.user_us + r.system_us;
  }
  // Messages in the timed rounds: one per process per round, k - 1 in alltoall.
  const double per_round = s.pattern == "alltoall" ? static_cast<double>(s.k - 1) : 1.0;
  const double steps = static_cast<double>(s.rounds) * s.k * per_round;
  if (!print) return true;
  if (header) {
    std::printf(
        "pattern,wait,k,cpus,spin_us,touch_kib,rounds,us_per_round,cpu_us_per_message,"
        "rusage_cpu_us_per_message,voluntary_cs_per_message,involuntary_cs_per_message,scatter_pages,hosts,walk_"
        "entries,walk_stride,walk_us_per_round,transport\n");
  }
  std::printf("%s,%s,%d,%d,%d,%ld,%ld,%.2f,%.2f,%.2f,%.3f,%.3f,%ld,%d,%ld,%ld,%.3f,%s\n", s.pattern.c_str(),
              s.wait.c_str(), s.k, cpus, s.spin_us, s.touch_bytes / 1024, s.rounds, per,
              s.pattern == "ring" ? per / s.k : per * std::min(cpus, s.k) / s.k / per_round, cpu / steps,
              voluntary / steps, involuntary / steps, s.scatter_pages, s.netns.empty() ? 0 : s.hosts, s.walk_entries,
              s.walk_stride, walk / (static_cast<double>(s.rounds) * s.k),
              s.packet ? "packet"
              : s.tcp  ? "tcp"
                       : "udp");
  std::fflush(stdout);
  return true;
}

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at <= list.size()) {
    std::size_t comma = list.find(',', at);
    if (comma == std::string::npos) comma = list.size();
    if (comma > at) out.push_back(list.substr(at, comma - at));
    at = comma + 1;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (bench::wants_help(argc, argv,
                        "usage: bazel-bin/experiments/wake_cost [options]\n"
                        "  What scheduling costs when k processes share the cores: CPU and context switches per\n"
                        "  message for rounds, a ring or an all-to-all of 16-byte messages, per wait mode.\n"
                        "  --procs=2,4,8,16,32,64,128,256  --cpus=2  --patterns=rounds,ring|alltoall\n"
                        "  --waits=spin,yield,block  --spin-us=100  --rounds=2000  --budget-ms=500  --warmup=50\n"
                        "  --touch-kib=0  --scatter-pages=0  --walk-entries=0 --walk-stride=128\n"
                        "  --transport=udp|packet|tcp  --packet-types=256  --netns=PREFIX --hosts=8 --sessions=1\n")) {
    return 0;
  }
  bench::Flags flags(argc, argv);
  std::vector<long> procs = flags.numbers("procs", {2, 4, 8, 16, 32, 64, 128, 256});
  int cpus = static_cast<int>(flags.number("cpus", 2));
  long budget_ms = flags.number("budget-ms", 500);
  const std::string transport = flags.text("transport", "udp");
  Settings base{"",
                "",
                0,
                static_cast<int>(flags.number("spin-us", 100)),
                flags.number("rounds", 2000),
                flags.number("warmup", 50),
                flags.number("touch-kib", 0) * 1024,
                flags.number("scatter-pages", 0),
                flags.number("walk-entries", 0),
                flags.number("walk-stride", 128),
                flags.text("netns", ""),
                static_cast<int>(flags.number("hosts", 8)),
                flags.number("sessions", 1) != 0,
                transport == "packet",
                transport == "tcp",
                static_cast<int>(flags.number("packet-types", bsp::transport::nic::kLoopbackEtherTypes))};

  // The first `cpus` of the allowed cores; every child inherits the mask.
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) < 0) die("wake_cost: sched_getaffinity");
  cpu_set_t chosen;
  CPU_ZERO(&chosen);
  int taken = 0;
  for (int c = 0; c < CPU_SETSIZE && taken < cpus; ++c) {
    if (CPU_ISSET(c, &allowed)) {
      CPU_SET(c, &chosen);
      ++taken;
    }
  }
  if (taken < cpus) {
    std::fprintf(stderr, "wake_cost: only %d cores allowed, --cpus=%d asked\n", taken, cpus);
    return 2;
  }
  if (sched_setaffinity(0, sizeof chosen, &chosen) < 0) die("wake_cost: sched_setaffinity");

  bool header = true, ok = true;
  for (const std::string& pattern : split(flags.text("patterns", "rounds,ring"))) {
    for (const std::string& wait : split(flags.text("waits", "spin,yield,block"))) {
      if (base.tcp && pattern == "ring") {
        std::fprintf(stderr, "wake_cost: --transport=tcp runs the rounds and the alltoall\n");
        return 2;
      }
      if ((pattern != "rounds" && pattern != "ring" && pattern != "alltoall") ||
          (wait != "spin" && wait != "yield" && wait != "block")) {
        std::fprintf(stderr, "wake_cost: unknown pattern %s or wait %s\n", pattern.c_str(), wait.c_str());
        return 2;
      }
      for (long k : procs) {
        if (k < 2 || k > 4096) continue;
        Settings s = base;
        s.pattern = pattern;
        s.wait = wait;
        s.k = static_cast<int>(k);
        // A short probe sizes the run to the budget (at least 20 rounds).
        Settings probe = s;
        probe.rounds = 20;
        probe.warmup = 5;
        auto t0 = Clock::now();
        if (!measure(probe, cpus, false, false)) {
          ok = false;
          continue;
        }
        double probe_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
        double per_round_ms = std::max(1e-4, probe_ms / 25.0);
        s.rounds = std::clamp(static_cast<long>(budget_ms / per_round_ms), 20L, base.rounds);
        ok = measure(s, cpus, header) && ok;
        header = false;
      }
    }
  }
  return ok ? 0 : 1;
}
