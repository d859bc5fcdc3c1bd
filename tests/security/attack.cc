// tests/security/attack.cc: the attacker of the security tests (see attack.h).
#include "tests/security/attack.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <sstream>

#include "auth/mac.h"
#include "bsplib/control/protocol.h"
#include "recovery/frame_codec.h"
#include "recovery/link_report.h"
#include "recovery/wire.h"
#include "transport/nic/ether_types.h"

namespace bsp::security {
namespace {

using Clock = std::chrono::steady_clock;

// Every byte the attacker sends that a program might print carries this.
constexpr char kMarker[] = "ATTACKER-MARK";

volatile sig_atomic_t g_stop = 0;
void on_term(int) { g_stop = 1; }

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// What can be read of a file; a /proc file whose process ends while it is read (ESRCH)
// gives what came before (an ifstream throws there, and in a forked attacker the
// exception would unwind into the test's own body).
std::string read_file(const std::string& path) {
  std::string text;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  char buffer[8192];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n > 0) {
      text.append(buffer, static_cast<std::size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  ::close(fd);
  return text;
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, separator)) parts.push_back(part);
  return parts;
}

std::string hex(const void* data, std::size_t size) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < size; ++i) {
    auto byte = static_cast<const unsigned char*>(data)[i];
    out += digits[byte >> 4];
    out += digits[byte & 15];
  }
  return out;
}

struct SocketEntry {
  std::uint16_t port = 0;
  int state = 0;  // tcp: 0x0A is LISTEN
};

// /proc/net/{udp,tcp}: inode -> local port and state.
std::map<unsigned long, SocketEntry> socket_table(const char* path) {
  std::map<unsigned long, SocketEntry> table;
  std::istringstream in(read_file(path));
  std::string line;
  std::getline(in, line);  // heading
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout;
    unsigned long inode = 0;
    if (!(fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >> timeout >> inode))
      continue;
    auto colon = local.find(':');
    if (colon == std::string::npos) continue;
    SocketEntry entry;
    entry.port = static_cast<std::uint16_t>(std::stoul(local.substr(colon + 1), nullptr, 16));
    entry.state = static_cast<int>(std::stoul(state, nullptr, 16));
    table[inode] = entry;
  }
  return table;
}

bool alive(pid_t pid) {
  std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  auto paren = stat.rfind(')');
  if (paren == std::string::npos || paren + 2 >= stat.size()) return false;
  char state = stat[paren + 2];
  return state != 'Z' && state != 'X';
}

bool all_alive(const JobView& job) {
  for (const auto& [pid, process] : job.processes) {
    if (!alive(process.os_pid)) return false;
  }
  return !job.processes.empty();
}

int ready_count(const std::string& dir, int processes) {
  int ready = 0;
  for (int pid = 0; pid < processes; ++pid) {
    if (::access((dir + "/ready." + std::to_string(pid)).c_str(), F_OK) == 0) ++ready;
  }
  return ready;
}

// ---------------------------------------------------------------- random numbers

struct Random {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  std::size_t below(std::size_t n) { return n ? static_cast<std::size_t>(next() % n) : 0; }
};

Random fresh_random() {
  std::uint64_t seed = 0;
  auth::random_bytes(std::as_writable_bytes(std::span(&seed, 1)));
  return Random{seed};
}

// ---------------------------------------------------------------- frames

using Bytes = std::vector<std::uint8_t>;

// The header's check (frame_codec.h), written as anyone can.
void write_crc(Bytes& frame) {
  if (frame.size() < wire::kHeaderSize) return;
  auto bytes = std::as_bytes(std::span(frame.data(), frame.size()));
  const std::uint16_t check = wire::frame_check(bytes.first(wire::kHeaderSize), bytes.subspan(wire::kHeaderSize));
  std::memcpy(frame.data() + offsetof(wire::Header, check), &check, sizeof check);
}

// Builds frames as a member would, but sealed with a key of the attacker's own: right
// job id and pids, right check, wrong MAC.
class Forge {
 public:
  Forge(std::uint32_t job_id, Random& random) : job_id_(job_id), random_(random) {
    auth::Key secret;
    auth::random_bytes(std::as_writable_bytes(std::span(secret)));
    key_ = wire::frame_key(secret);
  }

  // A put record into registration 0 whose data is the marker: a forged frame that got
  // through would write it into the victim's memory.
  Bytes put_record(std::size_t size) const {
    Bytes record{1, 0, 0, 0, 0, 0, 0, 0, 0};
    std::uint32_t length = static_cast<std::uint32_t>(size);
    for (int i = 0; i < 4; ++i) record.push_back(static_cast<std::uint8_t>(length >> (8 * i)));
    for (std::size_t i = 0; i < size; ++i)
      record.push_back(static_cast<std::uint8_t>(kMarker[i % (sizeof kMarker - 1)]));
    return record;
  }

  Bytes report(std::uint32_t received_end, std::uint32_t sent_end, std::uint32_t echo,
               std::vector<recovery::SeqRange> missing) const {
    recovery::LinkReport report{received_end, sent_end, echo, std::move(missing)};
    std::vector<std::byte> out(recovery::report_size(report.missing.size()));
    recovery::encode_report(report, out);
    Bytes bytes(out.size());
    std::memcpy(bytes.data(), out.data(), out.size());
    return bytes;
  }

  Bytes sealed(wire::FrameType type, int src, int dst, std::uint32_t seq, std::uint32_t ack, std::uint16_t flags,
               const Bytes& payload) const {
    Bytes frame(wire::kHeaderSize + payload.size());
    wire::Header header{};
    header.type = static_cast<std::uint8_t>(type);
    header.job_id = job_id_;
    header.src = static_cast<std::uint16_t>(src);
    header.dst = static_cast<std::uint16_t>(dst);
    header.seq = seq;
    header.ack = ack;
    header.flags = flags & 0xF;
    header.credit = 64;
    std::memcpy(frame.data(), &header, wire::kHeaderSize);
    if (!payload.empty()) std::memcpy(frame.data() + wire::kHeaderSize, payload.data(), payload.size());
    wire::seal_frame(std::as_writable_bytes(std::span(frame.data(), frame.size())), key_);
    return frame;
  }

  // A frame whose MAC is simply random (CRC made to match).
  Bytes random_mac(Bytes frame) {
    std::uint64_t mac = random_.next();
    std::memcpy(frame.data() + offsetof(wire::Header, mac), &mac, sizeof mac);
    write_crc(frame);
    return frame;
  }

  // Random bytes with the marker inside; job id and destination where the nic filter
  // looks, so they reach the process.
  Bytes garbage(int dst, std::size_t size) {
    Bytes bytes(size);
    for (auto& byte : bytes) byte = static_cast<std::uint8_t>(random_.next());
    for (std::size_t i = 0; i < sizeof kMarker - 1 && 16 + i < size; ++i)
      bytes[16 + i] = static_cast<std::uint8_t>(kMarker[i]);
    place_job(bytes, dst);
    return bytes;
  }

  void place_job(Bytes& bytes, int dst) const {
    if (bytes.size() >= offsetof(wire::Header, dst) + 2) {
      std::memcpy(bytes.data() + offsetof(wire::Header, job_id), &job_id_, 4);
      std::uint16_t to = static_cast<std::uint16_t>(dst);
      std::memcpy(bytes.data() + offsetof(wire::Header, dst), &to, 2);
    }
  }

 private:
  std::uint32_t job_id_;
  Random& random_;
  wire::FrameKey key_;
};

// ---------------------------------------------------------------- data-plane wires

class DataWire {
 public:
  virtual ~DataWire() = default;
  virtual bool send(int dst, const Bytes& frame) = 0;
};

class UdpWire final : public DataWire {
 public:
  explicit UdpWire(std::map<int, std::uint16_t> ports) : ports_(std::move(ports)) {
    fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int size = 4 << 20;
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
  }
  ~UdpWire() override { ::close(fd_); }
  bool send(int dst, const Bytes& frame) override {
    auto port = ports_.find(dst);
    if (port == ports_.end()) return false;
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    to.sin_port = htons(port->second);
    return ::sendto(fd_, frame.data(), frame.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to) ==
           static_cast<ssize_t>(frame.size());
  }

 private:
  std::map<int, std::uint16_t> ports_;
  int fd_ = -1;
};

class NicWire final : public DataWire {
 public:
  // Opened while still privileged (and inside the segment's namespace, if any); used
  // after dropping privileges.
  explicit NicWire(const std::map<int, SegmentPort>& segment = {}) {
    fd_ = ::socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);  // protocol 0: sends only
    index_ = static_cast<int>(::if_nametoindex("lo"));
    for (const auto& [pid, where] : segment) {
      Port port;
      port.index = static_cast<int>(::if_nametoindex(where.port.c_str()));
      unsigned mac[6];
      if (port.index == 0 || std::sscanf(where.mac.c_str(), "%x:%x:%x:%x:%x:%x", &mac[0], &mac[1], &mac[2], &mac[3],
                                         &mac[4], &mac[5]) != 6) {
        index_ = 0;  // not usable
        continue;
      }
      for (int i = 0; i < 6; ++i) port.mac[i] = static_cast<std::uint8_t>(mac[i]);
      ports_[pid] = port;
    }
  }
  ~NicWire() override {
    if (fd_ >= 0) ::close(fd_);
  }
  bool usable() const { return fd_ >= 0 && index_ > 0; }
  std::string error;
  // The frame as the job's own to dst: on lo with dst's EtherType, so it reaches dst's
  // socket (and its filter) like a member's frame; on a segment to dst's MAC, out of the
  // switch port toward its host.
  bool send(int dst, const Bytes& frame) override {
    const bool segment = !ports_.empty();
    auto port = ports_.find(dst);
    if (segment && port == ports_.end()) return false;
    const std::uint16_t type = transport::nic::data_ether_type(!segment, dst);
    Bytes ethernet(14 + frame.size());
    const std::uint8_t source[6] = {0x02, 0xBA, 0xD0, 0x00, 0xBE, 0xEF};
    if (segment) {
      std::memcpy(ethernet.data(), port->second.mac, 6);
    } else {
      std::memset(ethernet.data(), 0, 6);  // lo's address: every process of the job
    }
    std::memcpy(ethernet.data() + 6, source, 6);
    ethernet[12] = static_cast<std::uint8_t>(type >> 8);
    ethernet[13] = static_cast<std::uint8_t>(type & 0xFF);
    if (!frame.empty()) std::memcpy(ethernet.data() + 14, frame.data(), frame.size());
    sockaddr_ll to{};
    to.sll_family = AF_PACKET;
    to.sll_ifindex = segment ? port->second.index : index_;
    to.sll_halen = 6;
    to.sll_protocol = htons(type);
    return ::sendto(fd_, ethernet.data(), ethernet.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to) ==
           static_cast<ssize_t>(ethernet.size());
  }

 private:
  struct Port {
    int index = 0;
    std::uint8_t mac[6]{};
  };
  int fd_ = -1;
  int index_ = 0;
  std::map<int, Port> ports_;
};

// ---------------------------------------------------------------- privileges

std::string drop_privileges() {
  if (::geteuid() != 0) return std::to_string(::geteuid()) + " (not root: the job's own user, not dropped)";
  uid_t uid = 65534;
  gid_t gid = 65534;
  if (passwd* nobody = ::getpwnam("nobody")) {
    uid = nobody->pw_uid;
    gid = nobody->pw_gid;
  }
  if (::setgroups(0, nullptr) != 0 || ::setgid(gid) != 0 || ::setuid(uid) != 0 || ::geteuid() != uid) {
    return "FAILED to drop privileges: " + std::string(std::strerror(errno));
  }
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // a change of credentials cleared it
  return std::to_string(uid) + " (nobody)";
}

// ---------------------------------------------------------------- the plans

struct Context {
  AttackOptions options;
  Report report;
  Clock::time_point started = Clock::now();
  Random random = fresh_random();
  std::map<std::string, long> sent;

  void count(const std::string& what, bool ok) {
    if (ok) ++sent[what];
  }
  bool out_of_time() const { return g_stop || seconds_since(started) > 120; }
};

// Scans /proc until pred holds for what it shows of the job; false when the time to look
// (AttackOptions::find_seconds) ran out.
bool find_job(Context& context, JobView& job, const std::function<bool(const JobView&)>& pred) {
  while (!context.out_of_time() && seconds_since(context.started) < context.options.find_seconds) {
    job = scan_job(context.options.tag);
    // The socket tables are read before the descriptors: a socket made in between is
    // missing from them. Once pred holds (the processes are past bsp_begin), look again.
    if (pred(job)) {
      JobView settled = scan_job(context.options.tag);
      if (pred(settled)) {
        job = std::move(settled);
        return true;
      }
    }
    ::usleep(5000);
  }
  context.report["found"] = "no (" + std::to_string(job.processes.size()) + " processes seen)";
  return false;
}

bool job_ready(const Context& context, const JobView& job) {
  return static_cast<int>(job.processes.size()) == context.options.processes &&
         ready_count(context.options.ready_dir, context.options.processes) == context.options.processes;
}

void describe_job(Context& context, const JobView& job) {
  context.report["found"] = "yes";
  context.report["job_id"] = std::to_string(job.job_id);
  context.report["control"] = job.control;
  std::string ports;
  for (const auto& [pid, process] : job.processes) {
    ports += "pid" + std::to_string(pid) + ":";
    for (auto port : process.udp_ports) ports += "udp/" + std::to_string(port) + ",";
    for (auto port : process.tcp_listen_ports) ports += "tcp-listen/" + std::to_string(port) + ",";
    ports += " ";
  }
  context.report["ports"] = ports;
}

// The frames of one round of a data-plane plan, for process dst.
void data_round(Context& context, Forge& forge, DataWire& wire, const JobView& job, int dst, long round,
                const std::vector<Bytes>& replays, Plan plan, bool nic) {
  const int nprocs = static_cast<int>(job.processes.size());
  std::vector<int> sources;
  for (int src = 0; src < nprocs; ++src) {
    if (src != dst) sources.push_back(src);
  }
  const std::uint32_t low_seq = static_cast<std::uint32_t>(round % 64);
  switch (plan) {
    case Plan::udp_mac_forgery:
    case Plan::nic_mac_forgery:
      for (int src : sources) {
        using wire::FrameType;
        context.count("forged_data",
                      wire.send(dst, forge.random_mac(forge.sealed(FrameType::data, src, dst, low_seq, low_seq,
                                                                   wire::kFlagAckRequest, forge.put_record(64)))));
        context.count("replay", wire.send(dst, replays[static_cast<std::size_t>(round) % replays.size()]));
        std::uint32_t far = 1000000u + static_cast<std::uint32_t>(round % 5) - 2u;
        context.count("seq_near_1e6",
                      wire.send(dst, forge.sealed(FrameType::data, src, dst, far, far, 0, forge.put_record(32))));
        context.count("forged_ack", wire.send(dst, forge.sealed(FrameType::ack, src, dst, 0, 1000000, 0,
                                                                forge.report(1000000, 1000000, 0, {}))));
        context.count("forged_nack", wire.send(dst, forge.sealed(FrameType::nack, src, dst, 0, 0, 0,
                                                                 forge.report(5, 1000000, 0, {{0, 5}, {6, 1000000}}))));
        context.count("forged_probe",
                      wire.send(dst, forge.sealed(FrameType::probe, src, dst, 0, low_seq, wire::kFlagAckRequest,
                                                  forge.report(0, 1000000, static_cast<std::uint32_t>(round), {}))));
      }
      context.count("impostor",
                    wire.send(dst, forge.sealed(wire::FrameType::data, dst, dst, low_seq, 0, 0, forge.put_record(16))));
      context.count("impostor",
                    wire.send(dst, forge.sealed(wire::FrameType::data, 999, dst, low_seq, 0, 0, forge.put_record(16))));
      break;
    case Plan::udp_malformed:
    case Plan::nic_malformed: {
      int src = sources.empty() ? 0 : sources[static_cast<std::size_t>(round) % sources.size()];
      Bytes whole = forge.sealed(wire::FrameType::data, src, dst, low_seq, 0, 0, forge.put_record(100));
      // Truncated: shorter than a header (nic: long enough for the job filter), or a
      // header whose length field says more than came.
      for (std::size_t cut : {nic ? std::size_t{12} : std::size_t{1}, std::size_t{20}, wire::kHeaderSize - 1,
                              wire::kHeaderSize, whole.size() - 1}) {
        context.count("truncated",
                      wire.send(dst, Bytes(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(cut))));
      }
      if (!nic) context.count("empty_datagram", wire.send(dst, Bytes{}));
      // Absurd lengths: the length field 65535 or 0 (CRC made to match).
      for (std::uint16_t length : {std::uint16_t{65535}, std::uint16_t{0}, std::uint16_t{41}}) {
        Bytes frame = whole;
        std::memcpy(frame.data() + offsetof(wire::Header, length), &length, 2);
        write_crc(frame);
        context.count("absurd_length", wire.send(dst, frame));
      }
      // Longer than any frame the transport takes (cut by the receive buffer).
      if (round % 10 == 0) {
        context.count("oversized", wire.send(dst, forge.sealed(wire::FrameType::data, src, dst, low_seq, 0, 0,
                                                               forge.put_record(60000 - wire::kHeaderSize - 13))));
      }
      context.count("garbage", wire.send(dst, forge.garbage(dst, 12 + context.random.below(1500))));
      // A header that is right but for its type or version.
      for (std::uint8_t type : {std::uint8_t{0}, std::uint8_t{5}, std::uint8_t{0xFF}}) {
        Bytes frame = whole;
        frame[wire::kTypeOffset] = type;
        write_crc(frame);
        context.count("bad_type", wire.send(dst, frame));
      }
      Bytes old = whole;
      old[offsetof(wire::Header, magic)] = 0xB5;  // the first byte of versions 1-3
      write_crc(old);
      context.count("bad_version", wire.send(dst, old));
      break;
    }
    case Plan::udp_corrupt:
    case Plan::nic_corrupt:
      for (int src : sources) {
        Bytes frame = forge.sealed(wire::FrameType::data, src, dst, low_seq, 0, 0, forge.put_record(48));
        frame[wire::kHeaderSize + 13 + context.random.below(48)] ^= 0x20;  // payload damaged
        context.count("bad_crc_payload", wire.send(dst, frame));
        Bytes header = forge.sealed(wire::FrameType::ack, src, dst, 0, low_seq, 0,
                                    forge.report(low_seq, low_seq, 0, {}));
        header[offsetof(wire::Header, ack)] ^= 0x01;  // header damaged
        context.count("bad_crc_header", wire.send(dst, header));
      }
      break;
    default:
      break;
  }
}

void run_data_plane(Context& context, Plan plan) {
  const bool nic = plan == Plan::nic_mac_forgery || plan == Plan::nic_malformed || plan == Plan::nic_corrupt;
  JobView job;
  if (!find_job(context, job, [&](const JobView& j) {
        if (!job_ready(context, j)) return false;
        if (nic) return true;
        for (const auto& [pid, process] : j.processes) {
          if (process.udp_ports.empty()) return false;
        }
        return true;
      })) {
    return;
  }
  describe_job(context, job);
  std::unique_ptr<DataWire> wire;
  if (nic) {
    auto raw = std::make_unique<NicWire>(context.options.segment);
    if (!raw->usable()) {
      context.report["error"] = "cannot open an AF_PACKET socket on lo or the segment's ports: " +
                                std::string(std::strerror(errno));
      return;
    }
    wire = std::move(raw);
  } else {
    std::map<int, std::uint16_t> ports;
    for (const auto& [pid, process] : job.processes) ports[pid] = process.udp_ports.front();
    wire = std::make_unique<UdpWire>(ports);
  }
  context.report["uid"] = drop_privileges();
  Forge forge(job.job_id, context.random);
  // Frames sealed once with the attacker's key and sent again and again (replays).
  std::vector<Bytes> replays;
  const int nprocs = static_cast<int>(job.processes.size());
  for (int dst = 0; dst < nprocs; ++dst) {
    for (std::uint32_t seq = 0; seq < 8; ++seq) {
      replays.push_back(
          forge.sealed(wire::FrameType::data, (dst + 1) % nprocs, dst, seq, seq, 0, forge.put_record(200)));
    }
  }
  long rounds = 0;
  while (!context.out_of_time()) {
    if (!all_alive(job)) {
      context.report["stopped"] = "a process of the job exited";
      break;
    }
    for (int dst = 0; dst < nprocs; ++dst) {
      std::vector<Bytes> mine;
      for (const Bytes& frame : replays) {
        wire::Header header;
        std::memcpy(&header, frame.data(), wire::kHeaderSize);
        if (header.dst == dst) mine.push_back(frame);
      }
      data_round(context, forge, *wire, job, dst, rounds, mine, plan, nic);
    }
    ++rounds;
    ::usleep(5000);
  }
  context.report["rounds"] = std::to_string(rounds);
}

// ---- replays of captured genuine frames

// A capture socket on lo for every frame (ETH_P_ALL); each frame a process sends shows
// once as outgoing, which is the copy kept.
int open_capture(bool segment) {
  int fd = ::socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, htons(ETH_P_ALL));
  if (fd < 0) return -1;
  sockaddr_ll address{};
  address.sll_family = AF_PACKET;
  address.sll_protocol = htons(ETH_P_ALL);
  // On a segment: every port of the switch (each frame shows once going out of the
  // port toward its destination's host).
  address.sll_ifindex = segment ? 0 : static_cast<int>(::if_nametoindex("lo"));
  int size = 16 << 20;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// The frame of the job inside a captured Ethernet frame (nic: after the Ethernet header;
// udp: the payload of a datagram to one of the job's ports), or nothing.
std::optional<Bytes> job_frame(const std::uint8_t* packet, std::size_t size, bool nic, std::uint32_t job_id,
                               const std::map<std::uint16_t, int>& ports) {
  if (size < 14) return std::nullopt;
  std::uint16_t type = static_cast<std::uint16_t>(packet[12] << 8 | packet[13]);
  const std::uint8_t* frame = nullptr;
  std::size_t length = 0;
  if (nic) {
    if (!transport::nic::is_data_ether_type(type)) return std::nullopt;
    frame = packet + 14;
    length = size - 14;
  } else {
    if (type != 0x0800 || size < 14 + 20 + 8) return std::nullopt;
    const std::uint8_t* ip = packet + 14;
    std::size_t header = (ip[0] & 15u) * 4;
    if (ip[9] != 17 || size < 14 + header + 8) return std::nullopt;
    const std::uint8_t* udp = ip + header;
    std::uint16_t port = static_cast<std::uint16_t>(udp[2] << 8 | udp[3]);
    if (!ports.count(port)) return std::nullopt;
    frame = udp + 8;
    length = size - 14 - header - 8;
  }
  if (length < wire::kHeaderSize) return std::nullopt;
  wire::Header header;
  std::memcpy(&header, frame, wire::kHeaderSize);
  if (header.magic != wire::kMagic || header.job_id != job_id) return std::nullopt;
  return Bytes(frame, frame + length);
}

void run_replay(Context& context, bool nic) {
  JobView job;
  if (!find_job(context, job, [&](const JobView& j) {
        if (!job_ready(context, j)) return false;
        for (const auto& [pid, process] : j.processes) {
          if (!nic && process.udp_ports.empty()) return false;
        }
        return true;
      })) {
    return;
  }
  describe_job(context, job);
  int capture = open_capture(!context.options.segment.empty());
  if (capture < 0) {
    context.report["error"] = "cannot capture on lo: " + std::string(std::strerror(errno));
    return;
  }
  std::unique_ptr<DataWire> wire;
  std::map<std::uint16_t, int> ports;
  if (nic) {
    auto raw = std::make_unique<NicWire>(context.options.segment);
    if (!raw->usable()) {
      context.report["error"] = "cannot open an AF_PACKET socket on lo or the segment's ports";
      return;
    }
    wire = std::move(raw);
  } else {
    std::map<int, std::uint16_t> by_pid;
    for (const auto& [pid, process] : job.processes) {
      by_pid[pid] = process.udp_ports.front();
      ports[process.udp_ports.front()] = pid;
    }
    wire = std::make_unique<UdpWire>(by_pid);
  }
  context.report["uid"] = drop_privileges();
  struct Captured {
    Bytes frame;
    double at;
  };
  std::deque<Captured> recent;  // the last frames seen, oldest first
  long rounds = 0, captured = 0;
  std::vector<std::uint8_t> packet(70000);
  while (!context.out_of_time()) {
    if (!all_alive(job)) {
      context.report["stopped"] = "a process of the job exited";
      break;
    }
    const double now = seconds_since(context.started);
    for (int i = 0; i < 4000; ++i) {
      sockaddr_ll from{};
      socklen_t from_size = sizeof from;
      ssize_t n = ::recvfrom(capture, packet.data(), packet.size(), 0, reinterpret_cast<sockaddr*>(&from), &from_size);
      if (n <= 0) break;
      if (from.sll_pkttype != PACKET_OUTGOING) continue;
      auto frame = job_frame(packet.data(), static_cast<std::size_t>(n), nic, job.job_id, ports);
      if (!frame) continue;
      ++captured;
      recent.push_back({std::move(*frame), now});
      if (recent.size() > 4096) recent.pop_front();
    }
    // Again at once: the newest frames; later: frames captured 0.2 to 1 s ago.
    auto resend = [&](const Bytes& frame, const char* what) {
      wire::Header header;
      std::memcpy(&header, frame.data(), wire::kHeaderSize);
      context.count(std::string(what) + (header.type == 1 ? "_data" : "_report"), wire->send(header.dst, frame));
    };
    for (std::size_t i = 0; i < 8 && i < recent.size(); ++i) resend(recent[recent.size() - 1 - i].frame, "replay_now");
    for (const Captured& old : recent) {
      if (now - old.at > 0.2 && now - old.at < 1.0 && context.random.below(16) == 0) resend(old.frame, "replay_late");
    }
    ++rounds;
    ::usleep(5000);
  }
  ::close(capture);
  context.report["captured"] = std::to_string(captured);
  context.report["rounds"] = std::to_string(rounds);
}

// ---- control plane

struct Session {
  Session(std::string session_name, std::string bytes) : name(std::move(session_name)), payload(std::move(bytes)) {}
  std::string name;
  std::string payload;
  int fd = -1;
  bool connected = false;
  std::size_t written = 0;
  std::string received;
  double opened = 0;
  double closed = -1;  // seconds after opening when the coordinator closed it
  std::string error;
};

// source: the address to connect from ("": the kernel's choice).
int connect_nonblocking(const std::string& host_port, const std::string& source = "") {
  auto colon = host_port.rfind(':');
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<std::uint16_t>(std::atoi(host_port.c_str() + colon + 1)));
  if (::inet_pton(AF_INET, host_port.substr(0, colon).c_str(), &to.sin_addr) != 1) return -1;
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (!source.empty()) {
    sockaddr_in from{};
    from.sin_family = AF_INET;
    if (::inet_pton(AF_INET, source.c_str(), &from.sin_addr) != 1 ||
        ::bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0) {
      ::close(fd);
      return -1;
    }
  }
  if (::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0 && errno != EINPROGRESS) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Runs sessions until each is closed by the other side or `limit` seconds passed; the
// payload of each goes out once connected.
void run_sessions(std::vector<Session>& sessions, const std::string& where, double limit, Clock::time_point start) {
  for (Session& session : sessions) {
    session.fd = connect_nonblocking(where);
    session.opened = seconds_since(start);
    if (session.fd < 0) session.error = std::strerror(errno);
  }
  while (!g_stop && seconds_since(start) < limit) {
    std::vector<pollfd> waiters;
    std::vector<Session*> owners;
    for (Session& session : sessions) {
      if (session.fd < 0 || session.closed >= 0) continue;
      short events = POLLIN;
      if (!session.connected || session.written < session.payload.size()) events |= POLLOUT;
      waiters.push_back({session.fd, events, 0});
      owners.push_back(&session);
    }
    if (waiters.empty()) break;
    if (::poll(waiters.data(), waiters.size(), 20) <= 0) continue;
    for (std::size_t i = 0; i < waiters.size(); ++i) {
      Session& session = *owners[i];
      if (waiters[i].revents & POLLOUT) {
        session.connected = true;
        if (session.written < session.payload.size()) {
          ssize_t n = ::send(session.fd, session.payload.data() + session.written,
                             session.payload.size() - session.written, MSG_NOSIGNAL);
          if (n > 0) session.written += static_cast<std::size_t>(n);
        }
      }
      if (waiters[i].revents & (POLLIN | POLLHUP | POLLERR)) {
        char buffer[4096];
        ssize_t n = ::recv(session.fd, buffer, sizeof buffer, 0);
        if (n > 0) {
          session.received.append(buffer, static_cast<std::size_t>(n));
        } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
          session.closed = seconds_since(start) - session.opened;
          if (n < 0) session.error = std::strerror(errno);
        }
      }
    }
  }
}

void run_control(Context& context) {
  JobView job;
  if (!find_job(context, job, [&](const JobView& j) { return job_ready(context, j) && !j.control.empty(); })) return;
  describe_job(context, job);
  context.report["uid"] = drop_privileges();
  using control::MessageType;
  using control::MessageWriter;
  auto header = [](std::uint32_t length, MessageType type) {
    std::string bytes(5, '\0');
    std::memcpy(bytes.data(), &length, 4);
    bytes[4] = static_cast<char>(type);
    return bytes;
  };
  std::vector<Session> sessions = {
      {"silent", ""},
      {"abort_unproven",
       MessageWriter(MessageType::abort).str(std::string(kMarker) + ": this job is aborted from outside").bytes()},
      {"wrong_proof", MessageWriter(MessageType::proof).u64(context.random.next()).bytes()},
      {"short_proof", header(4, MessageType::proof) + "ABCD"},
      {"big_header_proof", header(16u << 20, MessageType::proof)},
      {"big_header_hello", header(16u << 20, MessageType::hello)},
      {"junk", std::string(kMarker) + " junk junk junk junk junk junk junk junk junk junk"},
      {"forged_hello", MessageWriter(MessageType::hello)
                           .i32(0)
                           .i32(3)
                           .i32(static_cast<std::int32_t>(::getpid()))
                           .str(std::string("127.0.0.1:9 ") + kMarker)
                           .bytes()},
      {"done_unproven", MessageWriter(MessageType::done).str(std::string("supersteps=1 ") + kMarker).bytes()},
  };
  for (int i = 0; i < 16; ++i) sessions.push_back({"flood" + std::to_string(i), ""});
  Clock::time_point start = Clock::now();
  run_sessions(sessions, job.control, 8.0, start);
  double flood_max = 0;
  int flood_open = 0;
  std::size_t flood_bytes = 0;
  for (const Session& session : sessions) {
    if (session.name.rfind("flood", 0) == 0) {
      if (session.closed < 0) ++flood_open;
      flood_max = std::max(flood_max, session.closed);
      flood_bytes = std::max(flood_bytes, session.received.size());
      continue;
    }
    const std::string key = "control." + session.name;
    context.report[key + ".closed_ms"] = session.closed < 0 ? "-1"
                                                            : std::to_string(static_cast<long>(session.closed * 1000));
    context.report[key + ".received"] = std::to_string(session.received.size());
    if (session.received.size() >= 5) {
      std::uint32_t length;
      std::memcpy(&length, session.received.data(), 4);
      context.report[key + ".first"] = "length " + std::to_string(length) + " type " +
                                       std::to_string(static_cast<unsigned char>(session.received[4]));
    }
    if (!session.error.empty()) context.report[key + ".error"] = session.error;
    if (session.fd >= 0) ::close(session.fd);
  }
  context.report["control.flood.max_closed_ms"] = std::to_string(static_cast<long>(flood_max * 1000));
  context.report["control.flood.open"] = std::to_string(flood_open);
  context.report["control.flood.max_received"] = std::to_string(flood_bytes);
  for (const Session& session : sessions) {
    if (session.fd >= 0 && session.name.rfind("flood", 0) == 0) ::close(session.fd);
  }
  context.sent["sessions"] = static_cast<long>(sessions.size());
  while (!g_stop) ::usleep(20000);
}

// ---- churn and floods (from the moment the job's processes exist)

long number_or(const Report& report, const std::string& key) {
  auto found = report.find(key);
  return found == report.end() ? -1 : std::atol(found->second.c_str());
}

bool job_seen(const JobView& job) { return !job.processes.empty() && !job.control.empty(); }

// Connect and close, as fast as one process can, on `port`s (round robin) until the job
// ends; the counts go to the report under `prefix`.
void churn(Context& context, const JobView& job, const std::vector<std::string>& targets, const std::string& prefix) {
  long connections = 0, failures = 0, resets = 0;
  std::string last_error;
  const Clock::time_point start = Clock::now();
  Clock::time_point checked = start;
  for (std::size_t i = 0; !g_stop; ++i) {
    int fd = connect_nonblocking(targets[i % targets.size()]);
    if (fd < 0) {
      ++failures;
      last_error = std::strerror(errno);
      if (errno == EADDRNOTAVAIL || errno == EMFILE) ::usleep(1000);
    } else {
      pollfd waiter{fd, POLLOUT, 0};
      if (::poll(&waiter, 1, 100) == 1 && !(waiter.revents & (POLLERR | POLLHUP))) {
        ++connections;
        // Every other close is a reset: no TIME_WAIT left behind to run out of ports.
        if (connections % 2 == 0) {
          linger reset{1, 0};
          ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
          ++resets;
        }
      } else {
        ++failures;
      }
      ::close(fd);
    }
    if (Clock::now() - checked > std::chrono::milliseconds(50)) {
      checked = Clock::now();
      if (!all_alive(job)) break;  // a process ended: its ports may be someone else's soon
    }
  }
  const double seconds = seconds_since(start);
  context.report[prefix + "connections"] = std::to_string(connections);
  context.report[prefix + "failures"] = std::to_string(failures);
  context.report[prefix + "resets"] = std::to_string(resets);
  context.report[prefix + "seconds"] = std::to_string(seconds);
  context.report[prefix + "per_second"] = std::to_string(static_cast<long>(connections / std::max(seconds, 1e-3)));
  if (!last_error.empty()) context.report[prefix + "last_error"] = last_error;
  context.sent["connections"] += connections;
}

// The coordinator's address, from the environment of the job's first process seen.
bool find_control(Context& context, JobView& job) {
  if (!find_job(context, job, job_seen)) return false;
  describe_job(context, job);
  return true;
}

void run_control_churn(Context& context) {
  JobView job;
  if (!find_control(context, job)) return;
  context.report["ready_when_attack_began"] = std::to_string(
      ready_count(context.options.ready_dir, context.options.processes));
  context.report["uid"] = drop_privileges();
  churn(context, job, {job.control}, "control_churn.");
  while (!g_stop) ::usleep(20000);
}

// Holds as many silent sessions as it can (up to 4000), opening a new one for every one
// the coordinator closes, until the job ends.
void run_control_idle_flood(Context& context, const std::string& source) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0) {
    limit.rlim_cur = std::min<rlim_t>(limit.rlim_max, 8192);
    ::setrlimit(RLIMIT_NOFILE, &limit);
  }
  JobView job;
  if (!find_control(context, job)) return;
  context.report["ready_when_attack_began"] = std::to_string(
      ready_count(context.options.ready_dir, context.options.processes));
  context.report["uid"] = drop_privileges();
  constexpr std::size_t kTarget = 4000;
  std::vector<int> open;
  long opened = 0, closed_by_victim = 0, failures = 0;
  std::size_t most = 0;
  std::string last_error;
  Clock::time_point checked = Clock::now();
  while (!g_stop) {
    for (int burst = 0; open.size() < kTarget && burst < 200; ++burst) {
      int fd = connect_nonblocking(job.control, source);
      if (fd < 0) {
        ++failures;
        last_error = std::strerror(errno);
        break;
      }
      open.push_back(fd);
      ++opened;
    }
    most = std::max(most, open.size());
    std::vector<pollfd> waiters;
    for (int fd : open) waiters.push_back({fd, POLLIN, 0});
    ::poll(waiters.data(), waiters.size(), 2);
    std::vector<int> still;
    for (const pollfd& waiter : waiters) {
      bool gone = false;
      if (waiter.revents & (POLLIN | POLLHUP | POLLERR)) {
        char buffer[256];
        ssize_t n = ::recv(waiter.fd, buffer, sizeof buffer, MSG_DONTWAIT);
        gone = n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR);
      }
      if (gone) {
        ++closed_by_victim;
        ::close(waiter.fd);
      } else {
        still.push_back(waiter.fd);
      }
    }
    open.swap(still);
    if (Clock::now() - checked > std::chrono::milliseconds(50)) {
      checked = Clock::now();
      if (!all_alive(job)) break;
    }
  }
  for (int fd : open) ::close(fd);
  context.report["control_flood.opened"] = std::to_string(opened);
  context.report["control_flood.most_open"] = std::to_string(most);
  context.report["control_flood.closed_by_victim"] = std::to_string(closed_by_victim);
  context.report["control_flood.failures"] = std::to_string(failures);
  if (!last_error.empty()) context.report["control_flood.last_error"] = last_error;
  context.sent["connections"] += opened;
  while (!g_stop) ::usleep(20000);
}

// ---- tcp data-plane set-up

int connect_blocking(std::uint16_t port, std::string& error) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  to.sin_port = htons(port);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
    error = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    return -1;
  }
  return fd;
}

// Reads what arrives for up to `seconds` or until `want` bytes came or the peer closed;
// the time of the close (seconds since start), or -1.
double read_until(int fd, std::string& received, std::size_t want, double seconds, Clock::time_point start,
                  std::string& error) {
  while (!g_stop && seconds_since(start) < seconds && received.size() < want) {
    pollfd waiter{fd, POLLIN, 0};
    if (::poll(&waiter, 1, 20) <= 0) continue;
    char buffer[4096];
    ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n > 0) {
      received.append(buffer, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) error = std::strerror(errno);
    return seconds_since(start);
  }
  return -1;
}

// One target: a process's listening data port. Runs as nobody in a child of the scout;
// writes its findings to `out` as key=value lines, keys prefixed with `prefix`.
void attack_listener(Context& context, Plan plan, std::uint16_t port, const JobView& job, const std::string& prefix,
                     int out) {
  Report found;
  found["port"] = std::to_string(port);
  found["uid"] = drop_privileges();
  const Clock::time_point start = Clock::now();
  const double hold = context.options.hold_seconds;
  std::string error;
  if (plan == Plan::tcp_setup_flood) {
    // Many silent connections at once, more every 10 ms, all held.
    std::vector<int> fds;
    int refused = 0;
    auto open_some = [&](int count) {
      for (int i = 0; i < count && fds.size() < 900; ++i) {
        int fd = connect_blocking(port, error);
        if (fd < 0) {
          ++refused;
          continue;
        }
        fds.push_back(fd);
      }
    };
    open_some(256);
    found["connected"] = fds.empty() ? "0" : "1";
    while (!g_stop && seconds_since(start) < hold && all_alive(job)) {
      open_some(8);
      ::usleep(10000);
    }
    for (int fd : fds) ::close(fd);
    found["flood.opened"] = std::to_string(fds.size());
    found["flood.refused"] = std::to_string(refused);
  } else {
    int fd = connect_blocking(port, error);
    found["connected"] = fd >= 0 ? "1" : "0";
    if (fd >= 0) {
      std::string payload, received;
      double closed = -1;
      switch (plan) {
        case Plan::tcp_setup_junk:
          payload = std::string(kMarker) + " junk junk junk junk junk junk junk junk junk junk junk junk!!";
          break;
        case Plan::tcp_setup_big_header: {
          std::uint32_t length = 16u << 20;
          payload.assign(reinterpret_cast<const char*>(&length), 4);
          payload += static_cast<char>(1);
          break;
        }
        case Plan::tcp_setup_forged_hello: {
          // The acceptor may open with a challenge (u32 job id, i32 its pid, 16-byte
          // nonce): then the hello is {i32 pid, 16-byte nonce, u64 MAC}, the MAC made up.
          // An acceptor that sends nothing gets the hello of the unauthenticated protocol,
          // {u32 job id, i32 pid}. Either way it claims to be the highest pid, which comes
          // last.
          const std::int32_t claimed = static_cast<std::int32_t>(context.options.processes - 1);
          closed = read_until(fd, received, 24, std::min(hold, 6.0), start, error);
          found["challenge_bytes"] = std::to_string(received.size());
          if (received.size() >= 24) {
            payload.assign(reinterpret_cast<const char*>(&claimed), 4);
            for (int i = 0; i < 3; ++i) {
              std::uint64_t random = context.random.next();
              payload.append(reinterpret_cast<const char*>(&random), 8);
            }
            payload.resize(28);
          } else {
            struct {
              std::uint32_t job_id;
              std::int32_t pid;
            } hello{job.job_id, claimed};
            payload.assign(reinterpret_cast<const char*>(&hello), sizeof hello);
          }
          break;
        }
        default:
          break;
      }
      found["sent_at_ms"] = std::to_string(static_cast<long>(seconds_since(start) * 1000));
      if (closed < 0 && !payload.empty()) {
        found["sent"] = std::to_string(::send(fd, payload.data(), payload.size(), MSG_NOSIGNAL));
      }
      if (closed < 0) closed = read_until(fd, received, SIZE_MAX, hold, start, error);
      found["received"] = std::to_string(received.size());
      found["closed_by_victim_ms"] = closed < 0 ? "-1" : std::to_string(static_cast<long>(closed * 1000));
      ::close(fd);
    }
  }
  found["held_ms"] = std::to_string(static_cast<long>(seconds_since(start) * 1000));
  if (!error.empty()) found["error"] = error;
  std::string text;
  for (const auto& [key, value] : found) text += prefix + key + "=" + value + "\n";
  if (::write(out, text.data(), text.size()) < 0) {
    // nothing to do: the report is lost
  }
}

// An attack on one listening port, running in a child of the scout (as nobody).
struct ListenerAttack {
  pid_t child;
  int pipe;
};

ListenerAttack start_listener_attack(Context& context, Plan plan, std::uint16_t port, const JobView& job,
                                     const std::string& prefix) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return {-1, -1};
  pid_t child = ::fork();
  if (child == 0) {
    ::close(fds[0]);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    attack_listener(context, plan, port, job, prefix, fds[1]);
    ::_exit(0);
  }
  ::close(fds[1]);
  context.count("listeners_attacked", child > 0);
  return {child, fds[0]};
}

// Waits for the end of the run, stops the listener attacks and adds their findings.
void finish_listener_attacks(Context& context, const std::vector<ListenerAttack>& attacks) {
  context.report["uid"] = drop_privileges();  // the scout too, while it waits
  while (!g_stop) ::usleep(20000);
  for (const ListenerAttack& attack : attacks) {
    if (attack.child > 0) ::kill(attack.child, SIGTERM);
  }
  for (const ListenerAttack& attack : attacks) {
    if (attack.pipe < 0) continue;
    std::string text;
    char buffer[4096];
    ssize_t n;
    while ((n = ::read(attack.pipe, buffer, sizeof buffer)) > 0 || (n < 0 && errno == EINTR)) {
      if (n > 0) text.append(buffer, static_cast<std::size_t>(n));
    }
    ::close(attack.pipe);
    if (attack.child > 0) ::waitpid(attack.child, nullptr, 0);
    for (const std::string& line : split(text, '\n')) {
      auto equals = line.find('=');
      if (equals != std::string::npos) context.report[line.substr(0, equals)] = line.substr(equals + 1);
    }
  }
}

// The scout (the test's user, reading /proc) waits for each process's listening data
// port and sends an attacker (nobody) at it as soon as it appears, while the process
// still waits for its peers.
void run_tcp_setup(Context& context, Plan plan) {
  std::vector<ListenerAttack> attacks;
  std::map<int, int> attacked;                          // pid -> processes ready when the attack began
  const int listeners = context.options.processes - 1;  // the highest pid dials, it accepts nobody
  JobView job;
  while (!context.out_of_time() && seconds_since(context.started) < context.options.find_seconds &&
         static_cast<int>(attacked.size()) < listeners) {
    job = scan_job(context.options.tag);
    for (const auto& [pid, process] : job.processes) {
      if (attacked.count(pid) || process.tcp_listen_ports.empty()) continue;
      attacked[pid] = ready_count(context.options.ready_dir, context.options.processes);
      attacks.push_back(start_listener_attack(context, plan, process.tcp_listen_ports.front(), job,
                                              "tcp.pid" + std::to_string(pid) + "."));
    }
    ::usleep(5000);
  }
  if (!job.processes.empty()) describe_job(context, job);
  for (const auto& [pid, ready] : attacked) {
    context.report["tcp.pid" + std::to_string(pid) + ".ready_before_attack"] = std::to_string(ready);
  }
  finish_listener_attacks(context, attacks);
}

// The data ports during the run: tcp connects on first use, so every process listens
// until it ends. Once every process has passed bsp_begin, each listening port gets every
// tcp_setup_* attack at once, each from a child of its own; keys "tcp.pid<k>.<attack>.".
void run_tcp_running(Context& context) {
  JobView job;
  if (!find_job(context, job, [&](const JobView& j) {
        if (!job_ready(context, j)) return false;
        for (const auto& [pid, process] : j.processes) {
          if (process.tcp_listen_ports.empty()) return false;
        }
        return true;
      })) {
    return;
  }
  describe_job(context, job);
  std::vector<ListenerAttack> attacks;
  for (const auto& [pid, process] : job.processes) {
    for (Plan plan : kListenerAttacks) {
      attacks.push_back(start_listener_attack(context, plan, process.tcp_listen_ports.front(), job,
                                              "tcp.pid" + std::to_string(pid) + "." + plan_name(plan) + "."));
    }
  }
  finish_listener_attacks(context, attacks);
}

// Every listening data port, churned from the moment it appears (while its process
// waits for the later ones) until the job ends: the scout (the test's user, reading
// /proc) sends a churner (nobody) at each port, as run_tcp_setup does.
void run_tcp_churn(Context& context) {
  std::vector<ListenerAttack> attacks;
  std::map<int, int> attacked;                          // pid -> processes ready when the churn began
  const int listeners = context.options.processes - 1;  // the highest pid dials, it accepts nobody
  JobView job;
  while (!context.out_of_time() && seconds_since(context.started) < context.options.find_seconds &&
         static_cast<int>(attacked.size()) < listeners) {
    job = scan_job(context.options.tag);
    for (const auto& [pid, process] : job.processes) {
      if (attacked.count(pid) || process.tcp_listen_ports.empty()) continue;
      attacked[pid] = ready_count(context.options.ready_dir, context.options.processes);
      const std::string prefix = "tcp_churn.pid" + std::to_string(pid) + ".";
      const std::string target = "127.0.0.1:" + std::to_string(process.tcp_listen_ports.front());
      int fds[2];
      if (::pipe2(fds, O_CLOEXEC) != 0) continue;
      pid_t child = ::fork();
      if (child == 0) {
        ::close(fds[0]);
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        Context mine;
        mine.options = context.options;
        mine.report[prefix + "uid"] = drop_privileges();
        churn(mine, job, {target}, prefix);
        std::string text;
        for (const auto& [key, value] : mine.report) text += key + "=" + value + "\n";
        if (::write(fds[1], text.data(), text.size()) < 0) {
          // nothing to do: the report is lost
        }
        ::_exit(0);
      }
      ::close(fds[1]);
      attacks.push_back({child, fds[0]});
    }
    ::usleep(5000);
  }
  if (!job.processes.empty()) describe_job(context, job);
  int earliest = context.options.processes;
  for (const auto& [pid, ready] : attacked) earliest = std::min(earliest, ready);
  context.report["ready_when_attack_began"] = std::to_string(attacked.empty() ? -1 : earliest);
  context.report["tcp_churn.ports"] = std::to_string(attacked.size());
  finish_listener_attacks(context, attacks);
  long total = 0;
  for (const auto& [pid, ready] : attacked) {
    total += static_cast<long>(number(context.report, "tcp_churn.pid" + std::to_string(pid) + ".connections"));
  }
  context.report["tcp_churn.connections"] = std::to_string(total);
  context.sent["connections"] += total;
}

// ---- observing the secret's descriptor (not an attack)

bool holds_secret(const VictimProcess& process, int* number) {
  for (std::size_t i = 0; i < process.descriptors.size(); ++i) {
    if (process.descriptors[i].find("bsp-job-secret") != std::string::npos) {
      if (number) *number = process.descriptor_numbers[i];
      return true;
    }
  }
  return false;
}

// The parent of a job's process (bsprun), from /proc/<pid>/status.
pid_t parent_of(pid_t pid) {
  for (const std::string& line : split(read_file("/proc/" + std::to_string(pid) + "/status"), '\n')) {
    if (line.rfind("PPid:", 0) == 0) return static_cast<pid_t>(std::atoi(line.c_str() + 5));
  }
  return -1;
}

// Whether process os_pid has a descriptor on the secret's memory file (by its name).
int launcher_holds_secret(pid_t os_pid, std::string& list) {
  int holds = 0;
  std::unique_ptr<DIR, void (*)(DIR*)> dir(::opendir(("/proc/" + std::to_string(os_pid) + "/fd").c_str()), [](DIR* d) {
    if (d) ::closedir(d);
  });
  if (!dir) return -1;
  while (dirent* entry = ::readdir(dir.get())) {
    if (entry->d_name[0] == '.') continue;
    char target[512];
    ssize_t n = ::readlink(("/proc/" + std::to_string(os_pid) + "/fd/" + entry->d_name).c_str(), target,
                           sizeof target - 1);
    if (n <= 0) continue;
    target[n] = '\0';
    list += std::string(entry->d_name) + ":" + target + " ";
    if (std::strstr(target, "bsp-job-secret")) holds = 1;
  }
  return holds;
}

void run_observe(Context& context) {
  // Before bsp_begin: a process other than pid 0 still waiting (--stagger-ms) holds it.
  JobView job;
  int holder = -1, number = -1;
  find_job(context, job, [&](const JobView& j) {
    for (const auto& [pid, process] : j.processes) {
      if (pid != 0 && holds_secret(process, &number)) {
        holder = pid;
        return true;
      }
    }
    return false;
  });
  context.report["before_begin.holder"] = std::to_string(holder);
  if (holder >= 0) {
    const VictimProcess& process = job.processes[holder];
    context.report["before_begin.descriptor"] = std::to_string(number);
    int fd = ::open(("/proc/" + std::to_string(process.os_pid) + "/fd/" + std::to_string(number)).c_str(), O_RDONLY);
    struct stat info {};
    if (fd >= 0 && ::fstat(fd, &info) == 0) {
      char mode[8];
      std::snprintf(mode, sizeof mode, "%o", info.st_mode & 07777);
      context.report["before_begin.mode"] = mode;
    }
    // The processes are started (this one holds the descriptor): bsprun has no need of it.
    const pid_t launcher = parent_of(process.os_pid);
    std::string list;
    context.report["launcher_pid"] = std::to_string(launcher);
    context.report["before_begin.launcher_holds"] = std::to_string(launcher > 0 ? launcher_holds_secret(launcher, list)
                                                                                : -1);
    context.report["before_begin.launcher_descriptors"] = list;
    auth::Key secret{};
    if (fd >= 0 && ::pread(fd, secret.data(), secret.size(), 0) == static_cast<ssize_t>(secret.size())) {
      context.report["secret"] = hex(secret.data(), secret.size());
      wire::FrameKey keys = wire::frame_key(secret);
      context.report["frame_key_header"] = hex(keys.header.data(), keys.header.size());
      context.report["frame_key_payload"] = hex(keys.payload.short_input.data(), keys.payload.short_input.size());
    }
    if (fd >= 0) ::close(fd);
  }
  // After bsp_begin: nobody holds it.
  if (!find_job(context, job, [&](const JobView& j) { return job_ready(context, j); })) return;
  describe_job(context, job);
  int holders = 0;
  for (const auto& [pid, process] : job.processes) {
    bool holds = holds_secret(process, nullptr);
    holders += holds ? 1 : 0;
    std::string list;
    for (const std::string& target : process.descriptors) list += target + " ";
    context.report["after_begin.pid" + std::to_string(pid) + ".descriptors"] = list;
  }
  context.report["after_begin.holders"] = std::to_string(holders);
  if (pid_t launcher = static_cast<pid_t>(number_or(context.report, "launcher_pid")); launcher > 0) {
    std::string list;
    context.report["after_begin.launcher_holds"] = std::to_string(launcher_holds_secret(launcher, list));
  }
  while (!g_stop) ::usleep(20000);
}

[[noreturn]] void attacker_main(const AttackOptions& options, int report_fd) {
  struct sigaction action {};
  action.sa_handler = on_term;
  ::sigaction(SIGTERM, &action, nullptr);  // no SA_RESTART: waits end at once
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  Context context;
  context.options = options;
  context.report["plan"] = plan_name(options.plan);
  if (!options.segment_netns.empty()) {  // a host on the cluster's segment (root, before dropping)
    int fd = ::open(("/var/run/netns/" + options.segment_netns).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 || ::setns(fd, CLONE_NEWNET) != 0) {
      context.report["error"] = "cannot enter network namespace " + options.segment_netns + ": " + std::strerror(errno);
    }
    if (fd >= 0) ::close(fd);
  }
  switch (options.plan) {
    case Plan::control:
      run_control(context);
      break;
    case Plan::tcp_setup_junk:
    case Plan::tcp_setup_silent:
    case Plan::tcp_setup_forged_hello:
    case Plan::tcp_setup_big_header:
    case Plan::tcp_setup_flood:
      run_tcp_setup(context, options.plan);
      break;
    case Plan::tcp_running:
      run_tcp_running(context);
      break;
    case Plan::observe_secret:
      run_observe(context);
      break;
    case Plan::control_churn:
      run_control_churn(context);
      break;
    case Plan::control_idle_flood:
      run_control_idle_flood(context, "");
      break;
    case Plan::control_idle_flood_other_host:
      run_control_idle_flood(context, "127.0.0.2");
      break;
    case Plan::tcp_churn:
      run_tcp_churn(context);
      break;
    case Plan::udp_replay_captured:
    case Plan::nic_replay_captured:
      run_replay(context, options.plan == Plan::nic_replay_captured);
      break;
    default:
      run_data_plane(context, options.plan);
      break;
  }
  long total = 0;
  for (const auto& [what, count] : context.sent) {
    context.report["sent." + what] = std::to_string(count);
    total += count;
  }
  context.report["sent.total"] = std::to_string(total);
  context.report["seconds"] = std::to_string(seconds_since(context.started));
  std::string text;
  for (const auto& [key, value] : context.report) text += key + "=" + value + "\n";
  for (std::size_t done = 0; done < text.size();) {
    ssize_t n = ::write(report_fd, text.data() + done, text.size() - done);
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  ::_exit(0);
}

}  // namespace

const char* plan_name(Plan plan) {
  switch (plan) {
    case Plan::udp_mac_forgery:
      return "udp_mac_forgery";
    case Plan::udp_malformed:
      return "udp_malformed";
    case Plan::udp_corrupt:
      return "udp_corrupt";
    case Plan::nic_mac_forgery:
      return "nic_mac_forgery";
    case Plan::nic_malformed:
      return "nic_malformed";
    case Plan::nic_corrupt:
      return "nic_corrupt";
    case Plan::udp_replay_captured:
      return "udp_replay_captured";
    case Plan::nic_replay_captured:
      return "nic_replay_captured";
    case Plan::control:
      return "control";
    case Plan::tcp_setup_junk:
      return "tcp_setup_junk";
    case Plan::tcp_setup_silent:
      return "tcp_setup_silent";
    case Plan::tcp_setup_forged_hello:
      return "tcp_setup_forged_hello";
    case Plan::tcp_setup_big_header:
      return "tcp_setup_big_header";
    case Plan::tcp_setup_flood:
      return "tcp_setup_flood";
    case Plan::tcp_running:
      return "tcp_running";
    case Plan::observe_secret:
      return "observe_secret";
    case Plan::control_churn:
      return "control_churn";
    case Plan::control_idle_flood:
      return "control_idle_flood";
    case Plan::control_idle_flood_other_host:
      return "control_idle_flood_other_host";
    case Plan::tcp_churn:
      return "tcp_churn";
  }
  return "?";
}

namespace {
struct CloseDir {
  void operator()(DIR* dir) const { ::closedir(dir); }
};
}  // namespace

JobView scan_job(const std::string& tag) {
  JobView job;
  auto udp = socket_table("/proc/net/udp");
  auto tcp = socket_table("/proc/net/tcp");
  std::unique_ptr<DIR, CloseDir> proc(::opendir("/proc"));
  if (!proc) return job;
  while (dirent* entry = ::readdir(proc.get())) {
    if (entry->d_name[0] < '1' || entry->d_name[0] > '9') continue;
    const std::string base = std::string("/proc/") + entry->d_name;
    std::vector<std::string> environment = split(read_file(base + "/environ"), '\0');
    bool tagged = false;
    VictimProcess process;
    std::string control, job_id;
    for (const std::string& variable : environment) {
      if (variable == tag) tagged = true;
      if (variable.rfind("BSP_PID=", 0) == 0) process.pid = std::atoi(variable.c_str() + 8);
      if (variable.rfind("BSP_CONTROL=", 0) == 0) control = variable.substr(12);
      if (variable.rfind("BSP_JOB_ID=", 0) == 0) job_id = variable.substr(11);
    }
    if (!tagged || process.pid < 0 || !alive(std::atoi(entry->d_name))) continue;
    process.os_pid = std::atoi(entry->d_name);
    std::unique_ptr<DIR, CloseDir> fds(::opendir((base + "/fd").c_str()));
    while (fds && (entry = ::readdir(fds.get()))) {
      if (entry->d_name[0] == '.') continue;
      char target[512];
      ssize_t n = ::readlink((base + "/fd/" + entry->d_name).c_str(), target, sizeof target - 1);
      if (n <= 0) continue;
      target[n] = '\0';
      process.descriptors.push_back(target);
      process.descriptor_numbers.push_back(std::atoi(entry->d_name));
      unsigned long inode = 0;
      if (std::sscanf(target, "socket:[%lu]", &inode) == 1) {
        if (auto found = udp.find(inode); found != udp.end()) process.udp_ports.push_back(found->second.port);
        if (auto found = tcp.find(inode); found != tcp.end() && found->second.state == 0x0A) {
          process.tcp_listen_ports.push_back(found->second.port);
        }
      }
    }
    job.control = control;
    job.job_id = static_cast<std::uint32_t>(std::strtoul(job_id.c_str(), nullptr, 10));
    job.processes[process.pid] = std::move(process);
  }
  return job;
}

Attacker::Attacker(const AttackOptions& options) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return;
  std::fflush(nullptr);
  pid_t child = ::fork();
  if (child == 0) {
    ::close(fds[0]);
    try {
      attacker_main(options, fds[1]);
    } catch (const std::exception& error) {
      const std::string text = std::string("error=the attacker failed: ") + error.what() + "\n";
      if (::write(fds[1], text.data(), text.size()) < 0) {
        // nothing to do: the report is lost
      }
    }
    ::_exit(0);  // never back into the test's body
  }
  ::close(fds[1]);
  if (child < 0) {
    ::close(fds[0]);
    return;
  }
  child_ = child;
  report_fd_ = fds[0];
}

Attacker::~Attacker() { stop(); }

Report Attacker::stop() {
  if (stopped_ || child_ < 0) return report_;
  stopped_ = true;
  ::kill(child_, SIGTERM);
  std::string text;
  auto deadline = Clock::now() + std::chrono::seconds(10);
  for (;;) {
    pollfd waiter{report_fd_, POLLIN, 0};
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0 || ::poll(&waiter, 1, static_cast<int>(left)) <= 0) break;
    char buffer[4096];
    ssize_t n = ::read(report_fd_, buffer, sizeof buffer);
    if (n <= 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(report_fd_);
  ::kill(child_, SIGKILL);  // if it is still there
  ::waitpid(child_, nullptr, 0);
  for (const std::string& line : split(text, '\n')) {
    auto equals = line.find('=');
    if (equals != std::string::npos) report_[line.substr(0, equals)] = line.substr(equals + 1);
  }
  return report_;
}

std::string describe(const Report& report) {
  std::string text;
  for (const auto& [key, value] : report) text += "  " + key + "=" + value + "\n";
  return text.empty() ? "  (no report from the attacker)\n" : text;
}

double number(const Report& report, const std::string& key) {
  auto found = report.find(key);
  return found == report.end() || found->second.empty() ? -1 : std::strtod(found->second.c_str(), nullptr);
}

}  // namespace bsp::security
