// tests/transport/contract_test.cc: one contract every composition of transports passes,
// run over tcp, udp, nic, xdp, shm and the hybrids shm+tcp/udp/nic/xdp, each plain, traced,
// faulty (the unreliable ones) and traced and faulty, as the engine uses them: through
// the channel layer, one thread per process. A hybrid's processes sit on two simulated
// hosts (the shm half of their addresses names another host), so both paths carry data.
// xdp takes an interface per process (its AF_XDP socket and XDP program own it): its
// processes each get one veth of a bridged segment in a network namespace of this test
// process's own (veth_segment.h), which ends with the process.
//
// The contract: every payload of every size from 0 to the largest arrives once, intact and
// in order per pair, among 4 and among 8 processes; the channels are closed and made again
// with no descriptor left behind; hostile frames (garbage, forgeries, replays, damaged and
// truncated copies) that a stranger can put on an unreliable path are counted and dropped
// without losing anything; on a reliable path a bad frame from a member is reported as the
// loss of that member; a member that goes away is reported lost where the path can tell
// (tcp); and a decorated hybrid keeps one channel per path (no acknowledgements between
// processes of one host).
#include <dirent.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <barrier>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "recovery/channel.h"
#include "recovery/frame_codec.h"
#include "tests/transport/packet_socket_access.h"
#include "tests/transport/veth_segment.h"
#include "transport/forwarding_transport.h"
#include "transport/hybrid_transport.h"
#include "transport/registry.h"
#include "transport/trace/trace_transport.h"

namespace bsp::transport {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using recovery::Channel;
using recovery::ChannelStats;
using testing::VethSegment;

constexpr std::uint32_t kJobId = 0xC0117AC7;
constexpr int kMostProcesses = 8;  // the largest job below: xdp's segment has a port each
// xdp's UMEM per process: 4 MiB receiving and 4 MiB sending (the default is 48 MiB, and
// eight processes pin it all).
constexpr const char* kXdpUmemFrames = "2048";

struct Composition {
  std::string transport;  // a registry name
  bool trace = false;
  bool fault = false;  // drop, duplicate, reorder and corrupt on the network path

  bool hybrid() const { return transport.find('+') != std::string::npos; }
  bool uses(const char* part) const { return transport.find(part) != std::string::npos; }
  bool unreliable() const { return uses("udp") || uses("nic") || uses("xdp"); }
  std::string label() const {
    std::string label = transport;
    for (char& c : label) c = c == '+' ? '_' : c;
    return label + (trace ? "_trace" : "") + (fault ? "_fault" : "");
  }
};

void PrintTo(const Composition& composition, std::ostream* out) { *out << composition.label(); }

std::vector<Composition> compositions() {
  std::vector<Composition> all;
  for (const char* name : {"tcp", "udp", "nic", "xdp", "shm", "shm+tcp", "shm+udp", "shm+nic", "shm+xdp"}) {
    Composition plain{name};
    all.push_back(plain);
    all.push_back(Composition{name, true, false});
    if (plain.unreliable()) {
      all.push_back(Composition{name, false, true});
      all.push_back(Composition{name, true, true});
    }
  }
  return all;
}

auth::Key job_secret() {
  auth::Key key{};
  for (std::size_t i = 0; i < key.size(); ++i) key[i] = static_cast<std::uint8_t>(0x5A + 11 * i);
  return key;
}

std::size_t open_descriptors() {
  std::size_t count = 0;
  if (DIR* dir = ::opendir("/proc/self/fd")) {
    while (::readdir(dir) != nullptr) ++count;
    ::closedir(dir);
  }
  return count;
}

// What each open descriptor is ("3 -> socket:[123]"), to name a leak.
std::string descriptors() {
  std::string list;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", error)) {
    std::string target = std::filesystem::read_symlink(entry.path(), error).string();
    list += " " + entry.path().filename().string() + "->" + target;
  }
  return list;
}

// ---- Hostile input: a decorator that hands the layer above what a stranger could send ----

struct InjectionCounts {
  std::atomic<std::uint64_t> injected{0};
};

// On an unreliable path, every few deliveries: random bytes from nobody and from a member,
// a replay of a real frame, the same with one bit flipped, and a truncated copy. On a
// reliable path (where only a member can put frames), nothing unless `garbage_from` is a
// member: then one frame of garbage from it, once.
class Injector final : public ForwardingTransport, private FrameSink {
 public:
  Injector(std::unique_ptr<Transport> inner, int pid, int nprocs, InjectionCounts& counts, int garbage_from)
      : ForwardingTransport(std::move(inner)),
        nprocs_(nprocs),
        counts_(counts),
        garbage_from_(garbage_from),
        random_(static_cast<std::uint64_t>(pid) * 7919 + 1) {}

  std::size_t receive(FrameSink& sink, std::size_t max_frames) override {
    outer_ = &sink;
    std::size_t delivered = inner().receive(*this, max_frames);
    if (!capabilities().reliable && delivered > 0 && ++turns_ % 3 == 0) inject_forgeries(sink);
    if (capabilities().reliable && garbage_from_ >= 0) {
      std::vector<std::byte> garbage(64, std::byte{0x5C});
      counts_.injected++;
      sink.on_frame(garbage_from_, garbage);
      garbage_from_ = -1;
    }
    outer_ = nullptr;
    return delivered;
  }

 private:
  void on_frame(int peer, std::span<const std::byte> frame) override {
    if (!frame.empty()) {
      last_peer_ = peer;
      last_.assign(frame.begin(), frame.end());
    }
    outer_->on_frame(peer, frame);
  }
  void on_peer_lost(int peer, std::string_view why) override { outer_->on_peer_lost(peer, why); }

  void inject_forgeries(FrameSink& sink) {
    auto random_bytes = [&](std::size_t size) {
      std::vector<std::byte> bytes(size);
      for (std::byte& b : bytes) b = static_cast<std::byte>(random_());
      return bytes;
    };
    const std::size_t mtu = capabilities().mtu;
    std::vector<std::byte> noise = random_bytes(random_() % std::min<std::size_t>(mtu, 2048));
    sink.on_frame(-1, noise);
    sink.on_frame(kNotAMember, noise);
    sink.on_frame(static_cast<int>(random_() % static_cast<std::uint64_t>(nprocs_)), random_bytes(48));
    counts_.injected += 3;
    if (last_.empty()) return;
    sink.on_frame(last_peer_, last_);  // a replay
    std::vector<std::byte> damaged = last_;
    damaged[random_() % damaged.size()] ^= std::byte{0x10};
    sink.on_frame(last_peer_, damaged);
    sink.on_frame(last_peer_, std::span<const std::byte>(last_).first(last_.size() / 2));
    counts_.injected += 3;
  }

  int nprocs_;
  InjectionCounts& counts_;
  int garbage_from_;
  std::mt19937_64 random_;
  FrameSink* outer_ = nullptr;
  std::uint64_t turns_ = 0;
  int last_peer_ = -1;
  std::vector<std::byte> last_;
};

// ---- A job of channels, one thread per process ----

struct JobPlan {
  int nprocs = 4;
  int payloads = 40;  // per ordered pair
  bool inject = false;
  int garbage_from = -1;  // with inject: the member whose garbage pid 0's reliable path sees
  bool traffic_within_hosts_only = false;
};

// Payload i from src to dst: its size from a list that covers 0, the small sizes, the
// frame boundaries and the largest, and bytes that depend on all four.
std::size_t payload_size(int i, std::size_t largest) {
  static const std::size_t kSizes[] = {0, 1, 2, 7, 8, 31, 32, 33, 255, 1024, 1400, 1472, 4096, 8191, 65000};
  constexpr std::size_t kCount = sizeof kSizes / sizeof kSizes[0];
  std::size_t k = static_cast<std::size_t>(i) % (kCount + 2);
  if (k == kCount) return largest;
  if (k == kCount + 1) return largest - 1;
  return std::min(kSizes[k], largest);
}

std::byte payload_byte(int src, int dst, int i, std::size_t at) {
  return static_cast<std::byte>((src * 131 + dst * 31 + i * 7 + static_cast<int>(at)) & 0xFF);
}

class Checker final : public recovery::PayloadSink {
 public:
  Checker(int pid, int nprocs, std::size_t largest)
      : pid_(pid), largest_(largest), next_(static_cast<std::size_t>(nprocs), 0) {}

  void on_payload(int peer, std::span<const std::byte> payload) override {
    if (peer < 0 || peer >= static_cast<int>(next_.size()) || peer == pid_) {
      fail("payload from impossible peer " + std::to_string(peer));
      return;
    }
    int i = next_[static_cast<std::size_t>(peer)]++;
    std::size_t want = payload_size(i, largest_);
    if (payload.size() != want) {
      fail("pid " + std::to_string(pid_) + ": payload " + std::to_string(i) + " from " + std::to_string(peer) +
           " has " + std::to_string(payload.size()) + " bytes, not " + std::to_string(want));
      return;
    }
    for (std::size_t at = 0; at < payload.size(); ++at) {
      if (payload[at] != payload_byte(peer, pid_, i, at)) {
        fail("pid " + std::to_string(pid_) + ": payload " + std::to_string(i) + " from " + std::to_string(peer) +
             " differs at byte " + std::to_string(at));
        return;
      }
    }
  }
  void on_peer_lost(int peer, std::string_view why) override { lost.emplace_back(peer, std::string(why)); }

  int received_from(int peer) const { return next_[static_cast<std::size_t>(peer)]; }
  std::vector<std::string> failures;
  std::vector<std::pair<int, std::string>> lost;

 private:
  void fail(std::string what) { failures.push_back(std::move(what)); }
  int pid_;
  std::size_t largest_;
  std::vector<int> next_;
};

// What one run of a job saw, per process.
struct Outcome {
  std::vector<std::string> errors;  // set-up errors, timeouts, failures and unexpected losses
  std::vector<ChannelStats> stats;
  std::uint64_t injected = 0;
};

class Job {
 public:
  Job(const Composition& composition, const JobPlan& plan) : composition_(composition), plan_(plan) {
    trace_dir_ = std::filesystem::temp_directory_path() /
                 ("contract." + std::to_string(::getpid()) + "." + std::to_string(++serial_));
    std::filesystem::create_directories(trace_dir_);
  }
  ~Job() { std::filesystem::remove_all(trace_dir_); }

  // Which simulated host pid runs on: two hosts for a hybrid, one otherwise.
  int host_of(int pid) const { return composition_.hybrid() && pid >= plan_.nprocs / 2 ? 1 : 0; }

  bool talks(int src, int dst) const {
    return src != dst && (!plan_.traffic_within_hosts_only || host_of(src) == host_of(dst));
  }

  // Builds the transports (this thread), then runs each process in a thread: connect, make
  // the channel, send, receive, drain, and wait for all before closing. `after` runs in
  // each process's thread once all have drained, with its channel still open.
  Outcome run(const std::function<void(int, Channel&, Checker&, Outcome&)>& after = {}) {
    const int n = plan_.nprocs;
    // xdp's processes (threads, and the transports made here) live in the segment's
    // namespace, the threads started below included; the rest of the test does not.
    std::optional<VethSegment::Entered> in_segment;
    if (composition_.uses("xdp")) in_segment.emplace(*VethSegment::get(kMostProcesses));
    std::vector<std::unique_ptr<Transport>> transports;
    std::vector<std::string> addresses;
    for (int pid = 0; pid < n; ++pid) {
      TransportConfig config{pid, n, kJobId, {}, job_secret(), wire::receive_filter(kJobId, pid)};
      config.options["connect_timeout_ms"] = "60000";
      if (composition_.uses("xdp")) {
        config.options["iface"] = VethSegment::get(kMostProcesses)->interface(pid);
        config.options["umem_frames"] = kXdpUmemFrames;
      }
      if (composition_.fault) config.options["fault"] = "drop=0.03,dup=0.02,reorder=0.03,corrupt=0.01,seed=5";
      std::unique_ptr<Transport> transport = create_transport(composition_.transport, config);
      if (composition_.trace)
        transport = wrap_with_trace(std::move(transport), (trace_dir_ / "job.pcap").string(), pid, false);
      if (plan_.inject) {
        int garbage_from = pid == 0 ? plan_.garbage_from : -1;
        transport = decorate(std::move(transport), [&](std::unique_ptr<Transport> path) -> std::unique_ptr<Transport> {
          return std::make_unique<Injector>(std::move(path), pid, n, injections_, garbage_from);
        });
      }
      addresses.push_back(transport->local_address());
      transports.push_back(std::move(transport));
    }
    Outcome outcome;
    outcome.stats.resize(static_cast<std::size_t>(n));
    std::mutex lock;
    std::atomic<int> drained{0}, closing{0}, left{0};
    std::vector<std::thread> threads;
    for (int pid = 0; pid < n; ++pid) {
      threads.emplace_back([&, pid] {
        std::vector<std::string> errors;
        try {
          run_process(pid, std::move(transports[static_cast<std::size_t>(pid)]), addresses, drained, closing, left,
                      outcome.stats[static_cast<std::size_t>(pid)], errors, after, outcome);
        } catch (const std::exception& error) {
          errors.push_back("pid " + std::to_string(pid) + ": " + error.what());
          drained++;
          closing++;
          left++;
        }
        std::lock_guard guard(lock);
        for (std::string& error : errors) outcome.errors.push_back(std::move(error));
      });
    }
    for (std::thread& thread : threads) thread.join();
    outcome.injected = injections_.injected;
    return outcome;
  }

 private:
  // The addresses as pid sees them: a peer on the other simulated host has its shm half
  // name a host that is not this one, so shm does not reach it.
  std::vector<std::string> addresses_seen_by(int pid, const std::vector<std::string>& addresses) const {
    std::vector<std::string> seen = addresses;
    if (!composition_.hybrid()) return seen;
    for (int peer = 0; peer < plan_.nprocs; ++peer) {
      if (host_of(peer) == host_of(pid)) continue;
      auto parts = split_hybrid_address(seen[static_cast<std::size_t>(peer)]);
      if (!parts) continue;
      std::string& shm = parts->first;  // shm:HOST:...
      std::size_t first = shm.find(':'), second = shm.find(':', first + 1);
      shm = shm.substr(0, first + 1) + "elsewhere" + shm.substr(second);
      seen[static_cast<std::size_t>(peer)] = "hybrid:" + shm + "|" + parts->second;
    }
    return seen;
  }

  void run_process(int pid, std::unique_ptr<Transport> transport, const std::vector<std::string>& addresses,
                   std::atomic<int>& drained, std::atomic<int>& closing, std::atomic<int>& left, ChannelStats& stats,
                   std::vector<std::string>& errors,
                   const std::function<void(int, Channel&, Checker&, Outcome&)>& after, Outcome& outcome) {
    const int n = plan_.nprocs;
    transport->connect(addresses_seen_by(pid, addresses));
    recovery::ChannelConfig config;
    config.pid = pid;
    config.nprocs = n;
    config.job_id = kJobId;
    config.secret = job_secret();
    config.spin_us = 0;
    std::unique_ptr<Channel> channel = recovery::make_channel(std::move(transport), config);
    Checker checker(pid, n, channel->max_payload());
    // Sends every payload, peers in turn, making progress whenever no buffer is free.
    std::vector<int> sent(static_cast<std::size_t>(n), 0);
    std::vector<std::byte> payload;
    const auto deadline = Clock::now() + 120s;
    bool sending = true;
    while (sending) {
      sending = false;
      for (int peer = 0; peer < n; ++peer) {
        int& i = sent[static_cast<std::size_t>(peer)];
        if (!talks(pid, peer) || i == plan_.payloads) continue;
        sending = true;
        payload.resize(payload_size(i, channel->max_payload()));
        for (std::size_t at = 0; at < payload.size(); ++at) payload[at] = payload_byte(pid, peer, i, at);
        if (channel->send(peer, payload) == recovery::SendResult::ok) {
          ++i;
        } else {
          channel->progress(checker);
          if (Clock::now() > deadline) throw std::runtime_error("sending timed out");
        }
      }
    }
    // Receives until every peer's payloads are here and every own payload is acknowledged.
    auto complete = [&] {
      for (int peer = 0; peer < n; ++peer) {
        if (talks(peer, pid) && checker.received_from(peer) < plan_.payloads) return false;
      }
      return channel->all_acknowledged();
    };
    std::vector<int> awaited;
    while (!complete() && checker.lost.empty() && checker.failures.empty()) {
      if (channel->progress(checker) > 0) continue;
      awaited.clear();
      for (int peer = 0; peer < n; ++peer) {
        if (talks(peer, pid) && checker.received_from(peer) < plan_.payloads) awaited.push_back(peer);
      }
      channel->wait(awaited, 2ms);
      if (Clock::now() > deadline) {
        std::string missing;
        for (int peer : awaited) {
          missing += " " + std::to_string(peer) + ":" + std::to_string(checker.received_from(peer));
        }
        throw std::runtime_error("receiving timed out; received from" + missing);
      }
    }
    // Everyone drained: keep answering (acks, retransmissions) until all are.
    drained++;
    while (drained.load() < n && checker.lost.empty()) {
      channel->progress(checker);
      channel->wait({}, 1ms);
      if (Clock::now() > deadline) throw std::runtime_error("waiting for the others to drain timed out");
    }
    if (after) {
      after(pid, *channel, checker, outcome);  // the channel closes as soon as it returns
    } else {
      closing++;
      while (closing.load() < n && checker.lost.empty()) {
        channel->progress(checker);
        channel->wait({}, 1ms);
      }
      // No channel closes while another process may still read in the loop above: a tcp
      // peer's close read there would be reported as that peer's loss.
      left++;
      while (left.load() < n && Clock::now() < deadline) std::this_thread::yield();
    }
    stats = channel->stats();
    for (std::string& failure : checker.failures) errors.push_back(std::move(failure));
    for (auto& [peer, why] : checker.lost) {
      if (plan_.garbage_from < 0)
        errors.push_back("pid " + std::to_string(pid) + " lost " + std::to_string(peer) + ": " + why);
      else record_loss(pid, peer, why);
    }
  }

 public:
  struct Loss {
    int pid, peer;
    std::string why;
  };
  std::vector<Loss> lost_;  // with garbage_from: the losses reported

 private:
  void record_loss(int pid, int peer, const std::string& why) {
    std::lock_guard guard(losses_lock_);
    lost_.push_back({pid, peer, why});
  }
  std::mutex losses_lock_;

 private:
  Composition composition_;
  JobPlan plan_;
  std::filesystem::path trace_dir_;
  InjectionCounts injections_;
  static inline std::atomic<int> serial_{0};
};

// Whether an xdp process can run on the segment: its namespace made, and one xdp
// transport there attached its program and bound its socket. "" or why not (once).
const std::string& xdp_unusable() {
  static const std::string why = []() -> std::string {
    VethSegment* segment = VethSegment::get(kMostProcesses);
    if (!segment) return VethSegment::why();
    try {
      VethSegment::Entered in_segment(*segment);
      TransportConfig config{0, 1, kJobId, {}, job_secret(), wire::receive_filter(kJobId, 0)};
      config.options["iface"] = segment->interface(0);
      config.options["umem_frames"] = kXdpUmemFrames;
      std::unique_ptr<Transport> transport = create_transport("xdp", config);
      transport->connect({transport->local_address()});
      return "";
    } catch (const std::exception& error) {
      return std::string("an xdp transport cannot run on the test's veth segment: ") + error.what();
    }
  }();
  return why;
}

class Contract : public ::testing::TestWithParam<Composition> {
 protected:
  void SetUp() override {
    if (GetParam().uses("nic") && !nic::may_open_packet_sockets()) {
      GTEST_SKIP() << "nic needs packet sockets (root with CAP_NET_RAW, outside the sandbox)";
    }
    if (GetParam().uses("xdp") && !xdp_unusable().empty()) GTEST_SKIP() << xdp_unusable();
  }
};

void expect_clean(const Outcome& outcome) {
  for (const std::string& error : outcome.errors) ADD_FAILURE() << error;
}

TEST_P(Contract, EverySizeArrivesOnceInOrderAmongFour) {
  Job job(GetParam(), JobPlan{});
  Outcome outcome = job.run();
  expect_clean(outcome);
}

TEST_P(Contract, ManyPeersAllToAll) {
  JobPlan plan;
  plan.nprocs = 8;
  plan.payloads = 12;
  Job job(GetParam(), plan);
  expect_clean(job.run());
}

TEST_P(Contract, ClosedAndMadeAgainLeavesNoDescriptor) {
  JobPlan plan;
  plan.nprocs = 3;
  plan.payloads = 17;
  {
    Job warm(GetParam(), plan);
    expect_clean(warm.run());
  }  // libraries' own descriptors, once
  std::size_t before = open_descriptors();
  std::string before_list = descriptors();
  for (int round = 0; round < 2; ++round) {
    Job job(GetParam(), plan);
    expect_clean(job.run());
  }
  EXPECT_EQ(open_descriptors(), before) << "before:" << before_list << "\nafter:" << descriptors();
}

TEST_P(Contract, StrangersFramesAreDroppedAndNothingIsLost) {
  if (!GetParam().unreliable()) GTEST_SKIP() << "every path is authenticated: a stranger cannot put frames in";
  JobPlan plan;
  plan.inject = true;
  Job job(GetParam(), plan);
  Outcome outcome = job.run();
  expect_clean(outcome);
  ASSERT_GT(outcome.injected, 0u);
  std::uint64_t refused = 0;
  for (const ChannelStats& stats : outcome.stats) {
    refused += stats.foreign_dropped + stats.malformed_dropped + stats.corrupt_dropped + stats.duplicates_received +
               stats.window_refused;
  }
  EXPECT_GT(refused, 0u);
}

TEST_P(Contract, ABadFrameFromAMemberOnAReliablePathIsItsLoss) {
  if (GetParam().unreliable()) GTEST_SKIP() << "an unreliable path drops bad frames (the test above)";
  JobPlan plan;
  plan.nprocs = 2;
  plan.payloads = 3;
  plan.inject = true;
  plan.garbage_from = 1;
  Job job(GetParam(), plan);
  Outcome outcome = job.run();
  // pid 0 reports pid 1 first, for the bad frame (pid 1 may then see pid 0 leave).
  std::vector<Job::Loss> at_zero;
  for (const Job::Loss& loss : job.lost_) {
    if (loss.pid == 0) at_zero.push_back(loss);
  }
  ASSERT_FALSE(at_zero.empty()) << "pid 0 did not report pid 1 lost";
  EXPECT_EQ(at_zero[0].peer, 1);
  EXPECT_NE(at_zero[0].why.find("reliable transport"), std::string::npos) << at_zero[0].why;
  for (const ChannelStats& stats : outcome.stats) EXPECT_LE(stats.data_received, 3u);
}

TEST_P(Contract, AMemberThatLeavesIsReportedLost) {
  if (!GetParam().uses("tcp")) GTEST_SKIP() << "only a connection (tcp) tells that its other end is gone";
  JobPlan plan;
  plan.nprocs = GetParam().hybrid() ? 4 : 3;
  plan.payloads = 5;
  const int leaver = plan.nprocs - 1;  // on the other host in a hybrid: reached by tcp
  Job job(GetParam(), plan);
  std::atomic<bool> left{false};
  Outcome outcome = job.run([&](int pid, Channel& channel, Checker& checker, Outcome&) {
    if (pid == leaver) {
      left = true;
      return;  // its channel closes when this returns
    }
    if (job.host_of(pid) == job.host_of(leaver)) return;  // shm cannot tell in one process
    const auto deadline = Clock::now() + 60s;
    while (!left.load() && Clock::now() < deadline) std::this_thread::yield();
    bool lost = false;
    while (!lost && Clock::now() < deadline) {
      channel.progress(checker);
      for (auto& [peer, why] : checker.lost) lost = lost || peer == leaver;
      if (!lost) channel.wait(std::vector<int>{leaver}, 5ms);
    }
    EXPECT_TRUE(lost) << "pid " << pid << " never heard that pid " << leaver << " left";
    checker.lost.clear();  // expected
  });
  expect_clean(outcome);
}

TEST_P(Contract, ProcessesOfOneHostNeedNoAcknowledgements) {
  if (!GetParam().hybrid() || !GetParam().unreliable()) {
    GTEST_SKIP() << "only a hybrid over an unreliable network has acknowledgements to avoid on shm";
  }
  JobPlan plan;
  plan.traffic_within_hosts_only = true;
  Job job(GetParam(), plan);
  Outcome outcome = job.run();
  expect_clean(outcome);
  for (std::size_t pid = 0; pid < outcome.stats.size(); ++pid) {
    EXPECT_EQ(outcome.stats[pid].acks_received + outcome.stats[pid].explicit_acks_sent, 0u)
        << "pid " << pid << ": shm traffic went through the recovery protocol";
    EXPECT_GT(outcome.stats[pid].data_received, 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(Compositions, Contract, ::testing::ValuesIn(compositions()),
                         [](const ::testing::TestParamInfo<Composition>& info) { return info.param.label(); });

}  // namespace
}  // namespace bsp::transport
