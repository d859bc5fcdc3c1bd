// tests/transport/udp_transport_test.cc: the `udp` transport over loopback: addresses,
// batched exchange between several transports in one process, source -> pid mapping,
// strangers reported as -1, oversize frames, options, registry and the fault option;
// segmentation offload and its report, hostile coalesced buffers.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <thread>
#include <vector>

#include "transport/fault/fault_transport.h"
#include "transport/registry.h"
#include "transport/udp/udp_transport.h"

namespace bsp::transport {
namespace {

using namespace std::chrono_literals;

struct Arrival {
  int peer;
  std::vector<std::byte> bytes;
};

class Collector final : public FrameSink {
 public:
  void on_frame(int peer, std::span<const std::byte> frame) override {
    got.push_back(Arrival{peer, {frame.begin(), frame.end()}});
  }
  void on_peer_lost(int, std::string_view) override { lost = true; }
  std::vector<Arrival> got;
  bool lost = false;
};

std::vector<std::unique_ptr<Transport>> mesh(int n, std::map<std::string, std::string> options = {}) {
  std::vector<std::unique_ptr<Transport>> transports;
  std::vector<std::string> addresses;
  for (int pid = 0; pid < n; ++pid) {
    transports.push_back(create_transport("udp", TransportConfig{pid, n, 9, options}));
    addresses.push_back(transports.back()->local_address());
  }
  for (auto& transport : transports) transport->connect(addresses);
  return transports;
}

std::vector<std::byte> frame_of(int from, int to, int i, std::size_t size) {
  std::vector<std::byte> bytes(size);
  for (std::size_t k = 0; k < size; ++k) bytes[k] = static_cast<std::byte>(from * 31 + to * 7 + i + k);
  return bytes;
}

// Receives until `want` frames came or a second passed.
void drain(Transport& transport, Collector& sink, std::size_t want) {
  auto deadline = std::chrono::steady_clock::now() + 1s;
  while (sink.got.size() < want && std::chrono::steady_clock::now() < deadline) {
    if (transport.receive(sink, 64) == 0) {
      pollfd waiter{transport.wait_fd(), POLLIN, 0};
      ::poll(&waiter, 1, 10);
    }
  }
}

TEST(UdpTransportTest, AddressIsLoopbackIpAndPort) {
  auto transport = make_udp_transport(TransportConfig{0, 1, 1, {}});
  std::string address = transport->local_address();
  EXPECT_EQ(address.rfind("127.0.0.1:", 0), 0u) << address;
  EXPECT_GT(std::stoi(address.substr(10)), 0);
  // Every peer local: bigger frames; in a small job as large as a datagram can be, with a
  // pool that holds a bulk transfer in flight (24 MiB).
  EXPECT_EQ(transport->capabilities().mtu, 65507u);
  EXPECT_EQ(transport->capabilities().pool_frames, (24u << 20) / 65507u);
  auto crowded = make_udp_transport(TransportConfig{0, 17, 1, {}});
  EXPECT_EQ(crowded->capabilities().mtu, 8192u);
  EXPECT_EQ(crowded->capabilities().pool_frames, 0u);  // the reliable layer's default
  EXPECT_FALSE(transport->capabilities().reliable);
  EXPECT_EQ(transport->name(), "udp");
  // Off loopback the default is an Ethernet payload: 1500 - IP(20) - UDP(8).
  auto wired = make_udp_transport(TransportConfig{0, 1, 1, {{"host", "0.0.0.0"}}});
  EXPECT_EQ(wired->capabilities().mtu, 1472u);
}

TEST(UdpTransportTest, AllToAllBatchesArriveWithTheSendersPid) {
  constexpr int kProcs = 3;
  constexpr int kFrames = 200;
  auto transports = mesh(kProcs);
  for (int from = 0; from < kProcs; ++from) {
    std::vector<std::vector<std::byte>> frames;
    std::vector<OutFrame> batch;
    for (int to = 0; to < kProcs; ++to) {
      if (to == from) continue;
      for (int i = 0; i < kFrames; ++i) frames.push_back(frame_of(from, to, i, 1 + (i * 37) % 1472));
    }
    std::size_t at = 0;
    for (int to = 0; to < kProcs; ++to) {
      if (to == from) continue;
      for (int i = 0; i < kFrames; ++i) batch.push_back(OutFrame{to, frames[at++]});
    }
    EXPECT_EQ(transports[from]->send_batch(batch), batch.size());
  }
  for (int to = 0; to < kProcs; ++to) {
    Collector sink;
    drain(*transports[to], sink, (kProcs - 1) * kFrames);
    ASSERT_EQ(sink.got.size(), static_cast<std::size_t>((kProcs - 1) * kFrames));
    std::vector<int> next(kProcs, 0);
    for (const Arrival& arrival : sink.got) {
      ASSERT_GE(arrival.peer, 0);
      ASSERT_NE(arrival.peer, to);
      int i = next[arrival.peer]++;  // loopback keeps each sender's order
      EXPECT_EQ(arrival.bytes, frame_of(arrival.peer, to, i, 1 + (i * 37) % 1472));
    }
  }
}

// Runs of equal frames to one peer leave segmented (UDP_SEGMENT) and arrive coalesced
// (UDP_GRO) or, at a receiver without GRO, cut apart by the kernel: either way every
// frame arrives once, intact, in order, with the sender's pid; so with GSO off.
TEST(UdpTransportTest, SegmentedRunsArriveAsTheirFrames) {
  for (auto [gso, gro] : {std::pair{"1", "1"}, {"1", "0"}, {"0", "1"}}) {
    auto transports = mesh(3, {{"gso", gso}, {"gro", gro}});
    std::vector<std::vector<std::byte>> frames;
    std::vector<OutFrame> batch;
    // 20 full frames and a short one to pid 1, 9 to pid 2, 30 more to pid 1 (1000 bytes:
    // 65 fit a super-datagram, the run limit of 64 applies), then single frames.
    std::vector<std::pair<int, std::size_t>> shape;
    for (int i = 0; i < 20; ++i) shape.push_back({1, 8192});
    shape.push_back({1, 333});
    for (int i = 0; i < 9; ++i) shape.push_back({2, 8192});
    for (int i = 0; i < 70; ++i) shape.push_back({1, 1000});
    shape.push_back({2, 17});
    shape.push_back({1, 4000});
    std::vector<int> index(3, 0);
    for (auto [to, size] : shape) frames.push_back(frame_of(0, to, index[to]++, size));
    for (std::size_t k = 0; k < shape.size(); ++k) batch.push_back(OutFrame{shape[k].first, frames[k]});
    std::size_t sent = 0;
    for (int tries = 0; sent < batch.size() && tries < 1000; ++tries) {
      sent += transports[0]->send_batch(std::span(batch).subspan(sent));
    }
    ASSERT_EQ(sent, batch.size());
    for (int to = 1; to <= 2; ++to) {
      Collector sink;
      drain(*transports[to], sink, static_cast<std::size_t>(index[to]));
      ASSERT_EQ(sink.got.size(), static_cast<std::size_t>(index[to])) << "gso " << gso << " gro " << gro;
      int i = 0;
      for (std::size_t k = 0; k < shape.size(); ++k) {
        if (shape[k].first != to) continue;
        EXPECT_EQ(sink.got[static_cast<std::size_t>(i)].peer, 0);
        EXPECT_EQ(sink.got[static_cast<std::size_t>(i)].bytes, frames[k]) << "frame " << i << " to " << to;
        ++i;
      }
    }
  }
}

// With IP_RECVERR (option recverr, on off loopback) a closed peer's ICMP errors land on the
// socket's error queue: receive() reads them away, so the descriptor does not stay
// readable (POLLERR) and spin a waiting process; sending to the others goes on, and the
// closed peer is not reported lost (ECONNREFUSED is transient: its silence tells).
TEST(UdpTransportTest, ErrorQueueIsDrainedWhenQueueDropsAreReported) {
  auto transports = mesh(3, {{"recverr", "1"}});
  transports[2].reset();  // its port is closed now: datagrams to it draw ICMP errors
  std::vector<std::byte> frame(100, std::byte{3});
  std::vector<OutFrame> batch;
  for (int i = 0; i < 20; ++i) batch.push_back(OutFrame{2, frame});
  for (int round = 0; round < 5; ++round) {
    transports[0]->send_batch(batch);
    std::this_thread::sleep_for(2ms);
  }
  Collector sink;
  for (int i = 0; i < 10; ++i) transports[0]->receive(sink, 64);
  EXPECT_FALSE(sink.lost);
  EXPECT_TRUE(sink.got.empty());
  pollfd waiter{transports[0]->wait_fd(), POLLIN, 0};
  EXPECT_EQ(::poll(&waiter, 1, 0), 0) << "revents " << waiter.revents;
  ASSERT_EQ(transports[0]->send(1, frame), SendStatus::sent);
  Collector other;
  drain(*transports[1], other, 1);
  EXPECT_EQ(other.got.size(), 1u);
}

TEST(UdpTransportTest, StrangerIsReportedAsNotAMember) {
  auto transports = mesh(2);
  std::string address = transports[0]->local_address();
  sockaddr_in target{};
  target.sin_family = AF_INET;
  ::inet_pton(AF_INET, "127.0.0.1", &target.sin_addr);
  target.sin_port = htons(static_cast<std::uint16_t>(std::stoi(address.substr(address.rfind(':') + 1))));
  int stranger = ::socket(AF_INET, SOCK_DGRAM, 0);
  ASSERT_GE(stranger, 0);
  const char hello[] = "not a frame";
  ASSERT_EQ(::sendto(stranger, hello, sizeof hello, 0, reinterpret_cast<sockaddr*>(&target), sizeof target),
            static_cast<ssize_t>(sizeof hello));
  ::close(stranger);
  Collector sink;
  drain(*transports[0], sink, 1);
  ASSERT_EQ(sink.got.size(), 1u);
  EXPECT_EQ(sink.got[0].peer, kNotAMember);  // the layer above counts it as foreign
  EXPECT_EQ(sink.got[0].bytes.size(), sizeof hello);
}

TEST(UdpTransportTest, MtuOptionLimitsAndOversizeShowsTruncated) {
  auto small = mesh(2, {{"mtu", "256"}});
  EXPECT_EQ(small[0]->capabilities().mtu, 256u);
  // The peer has the default MTU and sends more than 256 bytes: the receiver sees 257.
  auto big = make_udp_transport(TransportConfig{1, 2, 9, {}});
  big->connect({small[0]->local_address(), big->local_address()});
  std::vector<std::byte> frame(600, std::byte{1});
  ASSERT_EQ(big->send(0, frame), SendStatus::sent);
  Collector sink;
  drain(*small[0], sink, 1);
  ASSERT_EQ(sink.got.size(), 1u);
  EXPECT_EQ(sink.got[0].bytes.size(), 257u);
}

// The offload the socket got shows in --stats (udp_stats): on loopback a run of equal
// frames leaves as one segmented send and arrives as one coalesced buffer; with offload
// off (the fallback when the kernel lacks it) every frame still arrives, one datagram each.
TEST(UdpTransportTest, OffloadAndItsFallbackAreReportedInStats) {
  for (std::string offload : {"1", "0"}) {
    auto transports = mesh(2, {{"udp_offload", offload}});
    std::vector<std::vector<std::byte>> frames;
    std::vector<OutFrame> batch;
    for (int i = 0; i < 10; ++i) frames.push_back(frame_of(0, 1, i, 1000));
    for (auto& frame : frames) batch.push_back(OutFrame{1, frame});
    ASSERT_EQ(transports[0]->send_batch(batch), batch.size());
    Collector sink;
    drain(*transports[1], sink, frames.size());
    ASSERT_EQ(sink.got.size(), frames.size()) << "offload " << offload;
    for (std::size_t i = 0; i < frames.size(); ++i) EXPECT_EQ(sink.got[i].bytes, frames[i]);
    const std::string sender = udp_stats(*transports[0]), receiver = udp_stats(*transports[1]);
    if (offload == "1") {
      EXPECT_NE(sender.find("udp:mtu-65507,gso-on,gro-on"), std::string::npos) << sender;
      EXPECT_NE(sender.find("udp_segmented_sends=1 "), std::string::npos) << sender;
      EXPECT_NE(receiver.find("udp_coalesced=1 "), std::string::npos) << receiver;
    } else {
      EXPECT_NE(sender.find("gso-off,gro-off"), std::string::npos) << sender;
      EXPECT_NE(sender.find("udp_segmented_sends=0 "), std::string::npos) << sender;
      EXPECT_NE(receiver.find("udp_coalesced=0 "), std::string::npos) << receiver;
    }
    EXPECT_NE(receiver.find("udp_bad_coalesced=0"), std::string::npos) << receiver;
  }
}

// A coalesced buffer whose segments are longer than any frame this transport takes (a
// sender that segments 1400-byte datagrams to a process whose frames are at most 1000
// bytes) is no run of frames of ours: it is counted and dropped whole, nothing of it
// handed on, and the frames after it still arrive.
TEST(UdpTransportTest, CoalescedBufferOfHostileSegmentSizeIsCountedAndDropped) {
  auto transports = mesh(2, {{"mtu", "1000"}});
  std::string address = transports[1]->local_address();
  sockaddr_in target{};
  target.sin_family = AF_INET;
  ::inet_pton(AF_INET, "127.0.0.1", &target.sin_addr);
  target.sin_port = htons(static_cast<std::uint16_t>(std::stoi(address.substr(address.rfind(':') + 1))));
  int hostile = ::socket(AF_INET, SOCK_DGRAM, 0);
  ASSERT_GE(hostile, 0);
  const int segment = 1400;
  if (::setsockopt(hostile, SOL_UDP, 103 /* UDP_SEGMENT */, &segment, sizeof segment) != 0) {
    ::close(hostile);
    GTEST_SKIP() << "this kernel has no UDP_SEGMENT: " << std::strerror(errno);
  }
  std::vector<char> payload(3 * 1400, 'h');
  ASSERT_EQ(::sendto(hostile, payload.data(), payload.size(), 0, reinterpret_cast<sockaddr*>(&target), sizeof target),
            static_cast<ssize_t>(payload.size()));
  ::close(hostile);
  auto good = frame_of(0, 1, 0, 900);
  ASSERT_EQ(transports[0]->send(1, good), SendStatus::sent);
  Collector sink;
  drain(*transports[1], sink, 1);
  const std::string stats = udp_stats(*transports[1]);
  if (stats.find("gro-on") == std::string::npos) GTEST_SKIP() << "no UDP_GRO here: " << stats;
  ASSERT_EQ(sink.got.size(), 1u) << stats;
  EXPECT_EQ(sink.got[0].bytes, good);
  EXPECT_NE(stats.find("udp_bad_coalesced=1"), std::string::npos) << stats;
}

TEST(UdpTransportTest, PaceSpacesDatagrams) {
  auto transports = mesh(2, {{"pace", "200us"}});
  std::vector<std::byte> frame(100, std::byte{2});
  std::vector<OutFrame> batch(10, OutFrame{1, frame});
  auto start = std::chrono::steady_clock::now();
  std::size_t sent = 0;
  while (sent < batch.size()) sent += transports[0]->send_batch(std::span(batch).subspan(sent));
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_GE(took, 9 * 200us);  // ten datagrams, nine gaps
  Collector sink;
  drain(*transports[1], sink, 10);
  EXPECT_EQ(sink.got.size(), 10u);
  EXPECT_THROW(make_udp_transport(TransportConfig{0, 1, 1, {{"pace", "fast"}}}), std::runtime_error);
  EXPECT_THROW(make_udp_transport(TransportConfig{0, 1, 1, {{"pace", "20 parsecs"}}}), std::runtime_error);
}

// A datagram that can never go (larger than UDP allows: EMSGSIZE) is not dropped in
// silence: the peer is reported lost, once, with the reason.
TEST(UdpTransportTest, PermanentSendErrorReportsThePeerLost) {
  auto transports = mesh(2);
  std::vector<std::byte> huge(70000, std::byte{1});
  OutFrame frame{1, huge};
  EXPECT_EQ(transports[0]->send_batch(std::span(&frame, 1)), 1u);
  Collector sink;
  transports[0]->receive(sink, 64);
  EXPECT_TRUE(sink.lost);
  Collector again;
  transports[0]->receive(again, 64);
  EXPECT_FALSE(again.lost);
}

TEST(UdpTransportTest, BadOptionsAreRefusedClearly) {
  EXPECT_THROW(make_udp_transport(TransportConfig{0, 1, 1, {{"mtu", "lots"}}}), std::runtime_error);
  EXPECT_THROW(make_udp_transport(TransportConfig{0, 1, 1, {{"mtu", "70000"}}}), std::runtime_error);
  EXPECT_THROW(make_udp_transport(TransportConfig{0, 1, 1, {{"host", "not-an-ip"}}}), std::runtime_error);
  auto transport = make_udp_transport(TransportConfig{0, 2, 1, {}});
  // More addresses than processes launched is an error; fewer is a smaller job
  // (bsp_begin asked for fewer than bsprun started).
  EXPECT_THROW(transport->connect({"127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"}), std::runtime_error);
  EXPECT_THROW(transport->connect({"127.0.0.1:1", "nowhere"}), std::runtime_error);
  EXPECT_NO_THROW(transport->connect({"127.0.0.1:1"}));
}

TEST(UdpTransportTest, RegistryKnowsUdpAndTheFaultOptionWrapsIt) {
  auto names = transport_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "udp"), names.end());
  auto plain = create_transport("udp", TransportConfig{0, 1, 1, {}});
  EXPECT_EQ(fault_counts(*plain), nullptr);
  auto faulty = create_transport("udp", TransportConfig{0, 1, 1, {{"fault", "drop=0.5,seed=3"}}});
  EXPECT_NE(fault_counts(*faulty), nullptr);
  EXPECT_EQ(faulty->name(), "fault+udp");
  EXPECT_THROW(create_transport("udp", TransportConfig{0, 1, 1, {{"fault", "drop=2"}}}), std::runtime_error);
}

}  // namespace
}  // namespace bsp::transport
