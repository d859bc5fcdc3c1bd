// transport/shm/shm_transport.cc: the shm transport (shm_transport.h).
#include "transport/shm/shm_transport.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "transport/file_descriptor.h"
#include "transport/option_spec.h"
#include "transport/registry.h"
#include "transport/shm/cross_memory.h"
#include "transport/shm/host_identity.h"
#include "transport/shm/huge_page_sources.h"
#include "transport/shm/moved_sources.h"
#include "transport/shm/shm_ring.h"
#include "transport/shm/shm_segment.h"

namespace bsp::transport {
namespace {

constexpr std::size_t kInboxBudget = 16u << 20;  // bytes of rings per process, split among senders
constexpr std::size_t kSmallestRing = 64u << 10;
constexpr std::size_t kLargestRing = 4u << 20;
constexpr std::size_t kLargestFrame = 65535 + 40;  // the wire header's u16 length, plus the header
// Staging for pulled transfers: two halves used in alternate supersteps. Only the pages
// written cost memory; a transfer that does not fit is pushed through the ring instead.
constexpr std::size_t kStagingBytes = 512u << 20;
constexpr std::size_t kStagingAlignment = 64;
// Single copy: from this size up, a peer reads a transfer straight from the sender's
// memory when the kernel lets it (docs/figures.md: process_vm_readv against two memcpys).
constexpr long kSingleCopyFrom = 64 << 10;
// A bsp_put from this size up moves its source aside instead of staging it (moved_sources.h).
constexpr long kPutMoveFrom = 1 << 20;

// The staging memfd's last bytes: what its owner tells its peers about single copies.
// Written by the owner only; the peers map it read-only.
// Layout: the read mark (a u64, Staging::publish_read_mark) and the staged mark
// (publish_staged_mark) on a cache line each, then a byte per pid: 1 this process may read
// that pid's memory, 2 it may not (0: not probed).
struct StagingControl {
  alignas(64) std::uint64_t read_mark;
  alignas(64) std::uint64_t staged_mark;
};
constexpr std::size_t kCanReadAt = sizeof(StagingControl);
std::size_t control_bytes(int nprocs) {
  return (kCanReadAt + static_cast<std::size_t>(nprocs) + 4095) & ~std::size_t{4095};
}
std::uint8_t* can_read(StagingControl* control, int pid) {
  return reinterpret_cast<std::uint8_t*>(control) + kCanReadAt + pid;
}
const std::uint8_t* can_read(const StagingControl* control, int pid) {
  return reinterpret_cast<const std::uint8_t*>(control) + kCanReadAt + pid;
}

struct ShmAddress {
  std::string host;
  int os_pid = 0, inbox_fd = -1, wake_fd = -1;
  std::size_t capacity = 0;
  int staging_fd = -1;
  std::size_t staging_bytes = 0;
  std::uint64_t staging_address = 0;  // where the staging memory lies in that process (a probe reads it)
};

std::optional<ShmAddress> parse_address(const std::string& text) {
  if (text.rfind("shm:", 0) != 0) return std::nullopt;
  std::vector<std::string> fields;
  std::stringstream in(text.substr(4));
  for (std::string field; std::getline(in, field, ':');) fields.push_back(field);
  if (fields.size() != 8 || fields[0].empty()) return std::nullopt;
  ShmAddress address;
  address.host = fields[0];
  try {
    std::size_t used = 0;
    auto number = [&](const std::string& field, long long low, long long high) {
      long long value = std::stoll(field, &used);
      if (used != field.size() || value < low || value > high) throw std::out_of_range(field);
      return value;
    };
    address.os_pid = static_cast<int>(number(fields[1], 1, 1 << 30));
    address.inbox_fd = static_cast<int>(number(fields[2], 0, 1 << 20));
    address.wake_fd = static_cast<int>(number(fields[3], 0, 1 << 20));
    address.capacity = static_cast<std::size_t>(number(fields[4], kSmallestRing / 16, 1ll << 30));
    address.staging_fd = static_cast<int>(number(fields[5], 0, 1 << 20));
    address.staging_bytes = static_cast<std::size_t>(number(fields[6], 0, 1ll << 40));
    address.staging_address = std::stoull(fields[7], &used, 16);
    if (used != fields[7].size()) return std::nullopt;
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (!std::has_single_bit(address.capacity)) return std::nullopt;
  return address;
}

// What shm reads from TransportConfig::options (shown by bsprun --help, checked there).
const std::vector<TransportOption>& shm_options() {
  static const std::vector<TransportOption> options = {
      number_option("shm-ring", "by p",
                    "bytes of each shm ring (one per sender in each process's inbox), a power of two (4096 to "
                    "1073741824; default 16 MiB / (p - 1) within 64 KiB .. 4 MiB)",
                    4096, 1L << 30),
      one_of_option("shm-single-copy", "huge",
                    "large bsp_hpput and bsp_get data read by the receiver straight from the sender's memory "
                    "(process_vm_readv, one copy): huge (where that memory lies on huge pages: the kernel copies "
                    "from 4 KiB pages slower than staging's two copies), any, or off (always through staging "
                    "memory: two copies; bsp_put's data too, see shm-put-move-from)",
                    {"huge", "any", "off"}),
      one_of_option("shm-collapse", "on",
                    "with --shm-single-copy=huge: memory on 4 KiB pages offered for a single copy a second "
                    "time (the same range) is moved onto huge pages first (MADV_COLLAPSE, once per range: "
                    "milliseconds for 8 MiB), so it and later transfers of it are single copies; off keeps "
                    "such memory on the two-copy path",
                    {"on", "off"}),
      number_option("shm-single-copy-from", std::to_string(kSingleCopyFrom),
                    "bytes from which a transfer may be a single copy (see shm-single-copy)", 1, 1L << 31),
      number_option("shm-put-move-from", std::to_string(kPutMoveFrom),
                    "bytes from which a bsp_put is a single copy too (with --shm-single-copy on): its source's "
                    "pages are moved aside for the receiver to read, and given back at the caller's first touch "
                    "(needs a userfaultfd that handles the kernel's accesses: root, CAP_SYS_PTRACE, "
                    "vm.unprivileged_userfaultfd=1 or access to /dev/userfaultfd; else staged)",
                    1, 1L << 31),
  };
  return options;
}

std::size_t ring_capacity(const TransportConfig& config) {
  TransportOptions options("shm", config.options, shm_options());
  if (std::optional<std::string> option = options.text("shm-ring")) {
    std::size_t bytes = 0;
    try {
      bytes = std::stoull(*option);
    } catch (const std::exception&) {
    }
    if (bytes < 4096 || bytes > (1u << 30) || !std::has_single_bit(bytes)) {
      throw std::runtime_error(
          fmt::format("shm transport: --shm-ring={} must be a power of two from 4096 to 1073741824 bytes", *option));
    }
    return bytes;
  }
  std::size_t share = kInboxBudget / static_cast<std::size_t>(std::max(1, config.nprocs - 1));
  return std::clamp<std::size_t>(std::bit_floor(share), kSmallestRing, kLargestRing);
}

class ShmTransport final : public Transport, private Staging {
 public:
  explicit ShmTransport(const TransportConfig& config)
      : config_(config), capacity_(ring_capacity(config)), host_(shm::host_key()) {
    TransportOptions options("shm", config.options, shm_options());
    single_copy_ = options.text("shm-single-copy").value_or("huge");
    sources_ = shm::HugePageSources(options.text("shm-collapse").value_or("on") == "on");
    if (std::optional<std::string> from = options.text("shm-single-copy-from")) {
      single_copy_from_ = std::stoull(*from);  // (checked against its spec before)
    }
    if (std::optional<std::string> from = options.text("shm-put-move-from")) put_move_from_ = std::stoull(*from);
    inbox_ = shm::InboxMapping::create(shape_of(config_.pid, capacity_), config_.secret);
    staging_ = shm::StagingMapping::create(kStagingBytes + control_bytes(config_.nprocs));
    if (single_copy_ != "off") shm::let_siblings_read();
    int ends[2];
    if (::pipe2(ends, O_NONBLOCK | O_CLOEXEC) != 0) {
      throw std::runtime_error(fmt::format("shm transport: pipe2: {}", std::strerror(errno)));
    }
    wake_read_.reset(ends[0]);
    wake_write_.reset(ends[1]);
    peers_.resize(static_cast<std::size_t>(config_.nprocs));
  }

  std::string_view name() const override { return "shm"; }

  Capabilities capabilities() const override {
    Capabilities capabilities;
    capabilities.mtu = std::min(capacity_ / 4, kLargestFrame);
    capabilities.reliable = true;
    capabilities.authenticated_links = true;
    capabilities.intact = true;
    capabilities.poll_without_yielding = !oversubscribed_;
    return capabilities;
  }

  std::string local_address() override {
    return fmt::format("shm:{}:{}:{}:{}:{}:{}:{}:{:x}", host_, ::getpid(), inbox_.fd(), wake_write_.get(), capacity_,
                       staging_.fd(), staging_.size(), reinterpret_cast<std::uintptr_t>(staging_.data()));
  }

  void connect(const std::vector<std::string>& addresses) override {
    for (int peer = 0; peer < static_cast<int>(addresses.size()) && peer < config_.nprocs; ++peer) {
      if (peer == config_.pid || addresses[peer].empty()) continue;
      std::optional<ShmAddress> address = parse_address(addresses[peer]);
      if (!address) {
        throw std::runtime_error(
            fmt::format("shm transport: pid {}'s address '{}' is not an shm address", peer, addresses[peer]));
      }
      if (address->host != host_) {
        throw std::runtime_error(
            fmt::format("shm transport: pid {} runs on another host (or network namespace) than pid {}: shared memory "
                        "reaches only this host's processes; use --transport=shm+tcp (or shm+udp, shm+nic) for a job "
                        "across hosts",
                        peer, config_.pid));
      }
      if (address->capacity != capacity_) {
        throw std::runtime_error(
            fmt::format("shm transport: pid {} has {}-byte rings, pid {} {}: give every "
                        "process the same --shm-ring",
                        peer, address->capacity, config_.pid, capacity_));
      }
      Peer& link = peers_[static_cast<std::size_t>(peer)];
      link.inbox = shm::InboxMapping::open_peer(address->os_pid, address->inbox_fd, shape_of(peer, capacity_),
                                                config_.secret);
      const std::string wake_path = fmt::format("/proc/{}/fd/{}", address->os_pid, address->wake_fd);
      link.wake.reset(::open(wake_path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC));
      if (!link.wake) {
        throw std::runtime_error(
            fmt::format("shm transport: opening pid {}'s wake-up pipe {}: {}", peer, wake_path, std::strerror(errno)));
      }
      if (address->staging_bytes < kStagingBytes + control_bytes(config_.nprocs)) {
        throw std::runtime_error(
            fmt::format("shm transport: pid {}'s staging area of {} bytes is too small", peer, address->staging_bytes));
      }
      link.staging = shm::StagingMapping::open_peer(address->os_pid, address->staging_fd, peer, address->staging_bytes);
      link.control = reinterpret_cast<const StagingControl*>(link.staging.data() + link.staging.size() -
                                                             control_bytes(config_.nprocs));
      link.os_pid = address->os_pid;
      probe_single_copy(peer, link, address->staging_address);
      link.writer = shm::RingWriter(link.inbox.ring_region(config_.pid), capacity_);
      link.reader = shm::RingReader(inbox_.ring_region(peer), capacity_);
      link.connected = true;
      connected_.push_back(peer);
    }
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    int cores = ::sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) : 1;
    oversubscribed_ = static_cast<int>(connected_.size()) + 1 > cores;
  }

  bool reaches(const std::string& address) const override {
    std::optional<ShmAddress> parsed = parse_address(address);
    return parsed && parsed->host == host_;
  }

  SendStatus send(int peer, std::span<const std::byte> frame) override { return send_gathered(peer, frame, {}); }

  // Both pieces are copied straight into the ring (reserve, copy, commit).
  SendStatus send_gathered(int peer, std::span<const std::byte> head, std::span<const std::byte> body) override {
    Peer& link = peers_[static_cast<std::size_t>(peer)];
    if (!link.connected || link.lost) return SendStatus::sent;  // reported at the next receive()
    std::span<std::byte> room = link.writer.reserve(head.size() + body.size());
    if (room.data() == nullptr) {
      if (link.writer.broken()) {
        lose(link, "its inbox's ring index cannot be (its memory was overwritten)");
        return SendStatus::sent;
      }
      // Full: the receiver wakes us when it has made room (ready() notices it earlier).
      link.wants_space = true;
      link.writer.want_space();
      return SendStatus::busy;
    }
    std::memcpy(room.data(), head.data(), head.size());
    if (!body.empty()) std::memcpy(room.data() + head.size(), body.data(), body.size());
    link.writer.commit(head.size() + body.size());
    link.wants_space = false;
    wake(link);
    return SendStatus::sent;
  }

  std::size_t receive(FrameSink& sink, std::size_t max_frames) override {
    std::size_t delivered = 0;
    for (std::size_t turn = 0; turn < connected_.size() && delivered < max_frames; ++turn) {
      next_ = next_ + 1 < connected_.size() ? next_ + 1 : 0;
      const int peer = connected_[next_];
      Peer& link = peers_[static_cast<std::size_t>(peer)];
      while (delivered < max_frames && !link.lost) {
        std::span<const std::byte> frame = link.reader.peek();
        if (frame.data() == nullptr) {
          if (link.reader.broken()) lose(link, link.reader.broken_why());
          break;
        }
        sink.on_frame(peer, frame);
        link.reader.release();
        ++delivered;
      }
      if (link.reader.take_space_request()) poke(link);  // its sender waits for room
      if (link.lost && !link.reported) {
        link.reported = true;
        sink.on_peer_lost(peer, link.why);
      }
    }
    return delivered;
  }

  Staging* staging() override { return this; }

  std::byte* stage(int peer, std::size_t size, std::uint64_t& token) override {
    if (peer < 0 || peer >= config_.nprocs || !peers_[static_cast<std::size_t>(peer)].connected) return nullptr;
    const std::size_t half = kStagingBytes / 2;
    std::size_t& used = staging_used_[staging_half_];
    if (size > half - used) return nullptr;
    token = staging_half_ * half + used;
    last_half_ = staging_half_;
    used += (size + kStagingAlignment - 1) & ~(kStagingAlignment - 1);
    used = std::min(used, half);
    return staging_.data() + token;
  }

  std::span<const std::byte> staged(int peer, std::uint64_t token, std::size_t size) override {
    if (peer < 0 || peer >= config_.nprocs) return {};
    const Peer& link = peers_[static_cast<std::size_t>(peer)];
    if (!link.connected || token > kStagingBytes || size > kStagingBytes - token) return {};
    return {link.staging.data() + token, size};
  }

  std::string_view single_copy_to(int peer, const void* data, std::size_t size) override {
    if (single_copy_ == "off") return "off";
    if (size < single_copy_from_) return "small";
    if (std::string_view why = readable_by(peer); !why.empty()) return why;
    moved_.give_back(data, size);  // (a bsp_put's source of an earlier superstep, kept aside)
    if (single_copy_ == "huge") return sources_.prepare(data, size);
    return {};
  }

  const std::byte* move_put_source(int peer, const void* data, std::size_t size, std::string_view& why) override {
    why = single_copy_ == "off" || size < put_move_from_ ? "bsp_put" : readable_by(peer);
    if (!why.empty()) return nullptr;
    if (const std::byte* aside = moved_.find(data, size, why); aside || !why.empty()) return aside;
    if (single_copy_ == "huge" && !(why = sources_.prepare(data, size)).empty()) return nullptr;
    return moved_.move(data, size, single_copy_ == "huge", why);
  }

  void moved_read() override { moved_.readers_done(); }
  std::string moved_report() const override { return moved_.report(); }

  std::uint64_t huge_page_collapses() const override { return sources_.collapses(); }
  std::string collapse_refusal() const override { return sources_.last_refusal(); }

  // The address and size come from the peer, about its own memory: checked for wrapping
  // here; what they name is for the kernel to refuse (another process's memory is out of
  // reach by construction: only os_pid's is read).
  std::string read_peer(int peer, std::uint64_t address, std::byte* into, std::size_t size) override {
    if (peer < 0 || peer >= config_.nprocs || !peers_[static_cast<std::size_t>(peer)].connected) {
      return fmt::format("pid {} is not reached through shared memory", peer);
    }
    if (address == 0 || address + size < address || address + size > (std::uint64_t{1} << 57)) {
      return fmt::format("address {:#x} + {} bytes is no user address", address, size);
    }
    return shm::read_from(peers_[static_cast<std::size_t>(peer)].os_pid, address, into, size);
  }

  void publish_read_mark(std::uint64_t mark) override {
    __atomic_store_n(&control()->read_mark, mark, __ATOMIC_RELEASE);
  }

  std::uint64_t read_mark(int peer) const override {
    if (peer < 0 || peer >= config_.nprocs || !peers_[static_cast<std::size_t>(peer)].connected) return 0;
    return __atomic_load_n(&peers_[static_cast<std::size_t>(peer)].control->read_mark, __ATOMIC_ACQUIRE);
  }

  void publish_staged_mark(std::uint64_t mark) override {
    __atomic_store_n(&control()->staged_mark, mark, __ATOMIC_RELEASE);
  }

  std::uint64_t staged_mark(int peer) const override {
    if (peer < 0 || peer >= config_.nprocs || !peers_[static_cast<std::size_t>(peer)].connected) return 0;
    return __atomic_load_n(&peers_[static_cast<std::size_t>(peer)].control->staged_mark, __ATOMIC_ACQUIRE);
  }

  std::string single_copy_refusal(int peer) const override {
    if (peer < 0 || peer >= config_.nprocs) return {};
    return peers_[static_cast<std::size_t>(peer)].refusal;
  }

  bool post_superstep_line(int peer, std::uint64_t superstep, std::span<const std::byte> records) override {
    static_assert(Staging::kSuperstepLineBytes == shm::kSuperstepLineBytes);
    if (peer < 0 || peer >= config_.nprocs) return false;
    Peer& link = peers_[static_cast<std::size_t>(peer)];
    if (!link.connected || link.lost || !link.writer.post_line(superstep, records)) return false;
    wake(link);
    return true;
  }

  long take_superstep_line(int peer, std::uint64_t superstep, std::byte* into) override {
    if (peer < 0 || peer >= config_.nprocs) return -1;
    Peer& link = peers_[static_cast<std::size_t>(peer)];
    if (!link.connected) return -1;
    long size = link.reader.take_line(superstep, into);
    if (size < 0 && link.reader.broken() && !link.lost) lose(link, link.reader.broken_why());  // reported by receive()
    return size;
  }

  void next_superstep() override {
    staging_half_ ^= 1;
    staging_used_[staging_half_] = 0;  // its transfers were taken a whole superstep ago
  }

  void reuse_last() override {
    staging_half_ = last_half_;
    staging_used_[staging_half_] = 0;  // (the caller saw every reader's mark: taken already)
  }

  bool flush() override { return true; }
  int wait_fd() const override { return wake_read_.get(); }

  bool ready() override {
    for (int peer : connected_) {
      const Peer& link = peers_[static_cast<std::size_t>(peer)];
      if (link.reader.has_frames() || link.reader.line_waiting() || (link.lost && !link.reported)) return true;
      if (link.wants_space && link.writer.consumer_moved()) return true;  // room to send again
    }
    return false;
  }

  bool before_block() override {
    inbox_.sleeping().store(1, std::memory_order_seq_cst);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (!ready()) return true;
    inbox_.sleeping().store(0, std::memory_order_relaxed);
    return false;
  }

  void after_block() override {
    inbox_.sleeping().store(0, std::memory_order_relaxed);
    char drain[64];
    while (::read(wake_read_.get(), drain, sizeof drain) > 0) {
    }
  }

 private:
  struct Peer {
    shm::InboxMapping inbox;                  // the peer's: this process writes into its ring for us
    shm::StagingMapping staging;              // the peer's, read-only: pulled transfers come from here
    const StagingControl* control = nullptr;  // its end
    int os_pid = 0;
    std::string refusal;  // why this process cannot read the peer's memory ("" it can)
    FileDescriptor wake;  // the peer's wake-up pipe (write end)
    shm::RingWriter writer;
    shm::RingReader reader;  // our inbox's ring for frames from the peer
    bool connected = false, lost = false, reported = false;
    bool wants_space = false;  // our last frame to it found its ring full
    std::string why;
  };

  // "" when peer may read this process's memory (it probed it at connect), else why not.
  std::string_view readable_by(int peer) const {
    if (peer < 0 || peer >= config_.nprocs || !peers_[static_cast<std::size_t>(peer)].connected) return "no-path";
    switch (__atomic_load_n(can_read(peers_[static_cast<std::size_t>(peer)].control, config_.pid), __ATOMIC_ACQUIRE)) {
      case 1:
        return {};
      case 2:
        return "refused";  // (the peer's --stats says why)
      default:
        return "not-probed";
    }
  }

  StagingControl* control() const {
    return reinterpret_cast<StagingControl*>(staging_.data() + staging_.size() - control_bytes(config_.nprocs));
  }

  // Whether this process may read peer's memory: one byte of its staging area, read
  // through the kernel; the answer goes into this process's control area for peer to see.
  void probe_single_copy(int peer, Peer& link, std::uint64_t staging_address) {
    if (single_copy_ == "off") return;
    std::byte byte{};
    link.refusal = shm::read_from(link.os_pid, staging_address, &byte, 1);
    __atomic_store_n(can_read(control(), peer), static_cast<std::uint8_t>(link.refusal.empty() ? 1 : 2),
                     __ATOMIC_RELEASE);
  }

  shm::InboxShape shape_of(int owner, std::size_t capacity) const {
    return {config_.job_id, owner, config_.nprocs, capacity};
  }

  // Just after commit(), whose full barrier orders the head before this load (the other
  // half of before_block's store, fence, ready()).
  void wake(Peer& link) {
    if (link.inbox.sleeping().load(std::memory_order_seq_cst) != 0) poke(link);
  }

  // A write into the pipe of a process that has died (its read end gone) raises SIGPIPE,
  // which would kill this process before the coordinator names the dead one: the signal
  // is blocked for the write and the one it raised is taken back (one already pending
  // is left alone), and the peer counts as lost.
  void poke(Peer& link) {
    const char byte = 1;
    sigset_t pipe_signal, previous, pending;
    sigemptyset(&pipe_signal);
    sigaddset(&pipe_signal, SIGPIPE);
    ::pthread_sigmask(SIG_BLOCK, &pipe_signal, &previous);
    sigemptyset(&pending);
    ::sigpending(&pending);
    bool was_pending = sigismember(&pending, SIGPIPE) == 1;
    ssize_t written = ::write(link.wake.get(), &byte, 1);  // EAGAIN: a wake-up is pending already
    if (written < 0 && errno == EPIPE) {
      if (!was_pending) {
        const timespec now{};
        ::sigtimedwait(&pipe_signal, nullptr, &now);
      }
      lose(link, "its wake-up pipe is closed (the process is gone)");
    }
    ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  }

  void lose(Peer& link, std::string_view why) {
    link.lost = true;
    link.why = fmt::format("shared memory with it is broken: {}", why);
  }

  TransportConfig config_;
  std::size_t capacity_;
  std::string host_;
  shm::InboxMapping inbox_;
  shm::StagingMapping staging_;
  std::size_t staging_half_ = 0;
  std::size_t staging_used_[2] = {0, 0};
  std::size_t last_half_ = 0;  // the half stage() last handed out memory of
  FileDescriptor wake_read_, wake_write_;
  std::vector<Peer> peers_;
  std::vector<int> connected_;
  std::size_t next_ = 0;
  bool oversubscribed_ = true;        // more of the job's processes on this host than cores
  std::string single_copy_ = "huge";  // --shm-single-copy
  std::size_t single_copy_from_ = kSingleCopyFrom;
  std::size_t put_move_from_ = kPutMoveFrom;
  shm::HugePageSources sources_{true};  // --shm-collapse
  shm::MovedSources moved_;             // bsp_put sources moved aside (last: given back first)
};

TransportRegistration registration(
    "shm", [](const TransportConfig& config) { return std::make_unique<ShmTransport>(config); }, shm_options());

}  // namespace

std::unique_ptr<Transport> make_shm_transport(const TransportConfig& config) {
  return std::make_unique<ShmTransport>(config);
}

std::string shm_address_host(const std::string& text) {
  std::optional<ShmAddress> address = parse_address(text);
  return address ? address->host : std::string();
}

}  // namespace bsp::transport
