// tests/transport/nic_rings_test.cc: the nic transport's rings. TPACKET_V3 blocks read as
// hostile input (counts, offsets and lengths pointing outside the block, loops, a torn
// descriptor, random bytes: no frame is ever handed out beyond the block and the walk
// ends); ring geometry (slots within blocks, blocks a power of two); and, live on lo
// (root, outside the sandbox; skipped otherwise), 64 KiB frames through every receive and
// send mode arriving whole (recvmsg's with their payloads placed where the sink asks),
// frames of hostile lengths (longer than the MTU) dropped and counted by every receive
// mode, and the V2 ring telling a waiting process of a frame without a system call.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>

#include <bit>
#include <chrono>
#include <cstring>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include "transport/nic/nic_transport.h"
#include "transport/nic/packet_socket.h"
#include "transport/nic/ring_geometry.h"
#include "transport/nic/segment_check.h"
#include "transport/nic/v3_block.h"
#include "tests/transport/packet_socket_access.h"

namespace bsp::transport::nic {
namespace {

// ---- a synthetic V3 block: descriptor, then frames at 8-byte boundaries ----

constexpr std::size_t kBlock = 4096;
constexpr std::size_t kFirst = 48;  // after the descriptor, 8-aligned
constexpr std::uint16_t kMac = 82;  // where the kernel puts the Ethernet header

struct Block {
  std::vector<std::byte> bytes = std::vector<std::byte>(kBlock);

  void descriptor(std::uint32_t count, std::uint32_t first) {
    tpacket_block_desc desc{};
    desc.version = TPACKET_V3;
    desc.hdr.bh1.block_status = TP_STATUS_USER;
    desc.hdr.bh1.num_pkts = count;
    desc.hdr.bh1.offset_to_first_pkt = first;
    std::memcpy(bytes.data(), &desc, sizeof desc);
  }
  void frame(std::size_t at, std::uint32_t next, std::uint16_t mac, std::uint32_t snaplen, std::byte fill) {
    tpacket3_hdr header{};
    header.tp_next_offset = next;
    header.tp_mac = mac;
    header.tp_snaplen = header.tp_len = snaplen;
    std::memcpy(bytes.data() + at, &header, sizeof header);
    for (std::size_t i = 0; i < snaplen && at + mac + i < bytes.size(); ++i) bytes[at + mac + i] = fill;
  }
  std::span<const std::byte> span() const { return bytes; }
};

// Every frame the reader hands out lies inside the block; returns them all.
std::vector<std::span<const std::byte>> read_all(const Block& block, V3BlockReader& reader) {
  std::vector<std::span<const std::byte>> frames;
  for (int guard = 0; guard < 100000; ++guard) {
    std::span<const std::byte> frame = reader.next();
    if (frame.empty()) return frames;
    EXPECT_GE(frame.data(), block.bytes.data());
    EXPECT_LE(frame.data() + frame.size(), block.bytes.data() + block.bytes.size());
    frames.push_back(frame);
  }
  ADD_FAILURE() << "the walk did not end";
  return frames;
}

TEST(V3BlockTest, ReadsEveryFrameInOrder) {
  Block block;
  block.descriptor(3, kFirst);
  block.frame(kFirst, 200, kMac, 100, std::byte{1});
  block.frame(kFirst + 200, 304, kMac, 200, std::byte{2});
  block.frame(kFirst + 504, 0, kMac, 60, std::byte{3});
  V3BlockReader reader(block.span());
  auto frames = read_all(block, reader);
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(frames[0].size(), 100u);
  EXPECT_EQ(frames[1].size(), 200u);
  EXPECT_EQ(frames[2].size(), 60u);
  EXPECT_EQ(frames[1][0], std::byte{2});
  EXPECT_EQ(frames[2][59], std::byte{3});
  EXPECT_FALSE(reader.malformed());
}

TEST(V3BlockTest, EmptyBlockHasNoFrames) {
  Block block;
  block.descriptor(0, kFirst);
  V3BlockReader reader(block.span());
  EXPECT_TRUE(read_all(block, reader).empty());
  EXPECT_FALSE(reader.malformed());
}

TEST(V3BlockTest, HugeCountWithoutNextOffsetStopsAfterOneFrame) {
  Block block;
  block.descriptor(0xFFFFFFFFu, kFirst);
  block.frame(kFirst, 0, kMac, 100, std::byte{1});
  V3BlockReader reader(block.span());
  EXPECT_EQ(read_all(block, reader).size(), 1u);
  EXPECT_TRUE(reader.malformed());
}

TEST(V3BlockTest, FirstOffsetOutsideOrInsideTheDescriptorIsRefused) {
  for (std::uint32_t first : {0u, 8u, 40u, 4096u, 4090u, 0xFFFFFFF8u, 4096u - 40u, 51u}) {
    Block block;
    block.descriptor(1, first);
    if (first + sizeof(tpacket3_hdr) <= kBlock && first >= kFirst) block.frame(first, 0, 48, 8, std::byte{1});
    V3BlockReader reader(block.span());
    auto frames = read_all(block, reader);
    if (first == kFirst) continue;
    EXPECT_TRUE(frames.empty()) << "first offset " << first;
    EXPECT_TRUE(reader.malformed()) << "first offset " << first;
  }
}

TEST(V3BlockTest, FrameBytesPastTheBlockAreRefused) {
  struct Case {
    std::uint16_t mac;
    std::uint32_t snaplen;
  };
  for (Case c : {Case{kMac, 4096}, Case{kMac, 0xFFFFFFFFu}, Case{0xFFFF, 10}, Case{kMac, 4096 - kFirst - kMac + 1},
                 Case{0, 10}, Case{10, 10}}) {
    Block block;
    block.descriptor(1, kFirst);
    block.frame(kFirst, 0, c.mac, c.snaplen, std::byte{1});
    V3BlockReader reader(block.span());
    EXPECT_TRUE(read_all(block, reader).empty()) << c.mac << " " << c.snaplen;
    EXPECT_TRUE(reader.malformed());
  }
  Block exact;  // a frame that ends at the block's last byte is fine
  exact.descriptor(1, kFirst);
  exact.frame(kFirst, 0, kMac, kBlock - kFirst - kMac, std::byte{7});
  V3BlockReader reader(exact.span());
  auto frames = read_all(exact, reader);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].back(), std::byte{7});
}

TEST(V3BlockTest, NextOffsetBackwardsOrIntoTheFrameEndsTheBlock) {
  for (std::uint32_t next : {8u, 100u, 0xFFFFFFFFu - 40u}) {
    Block block;
    block.descriptor(5, kFirst);
    block.frame(kFirst, next, kMac, 100, std::byte{1});
    V3BlockReader reader(block.span());
    auto frames = read_all(block, reader);
    EXPECT_LE(frames.size(), 1u) << next;
    EXPECT_TRUE(reader.malformed()) << next;
  }
  // A loop through two frames pointing at each other cannot go round: offsets only grow.
  Block loop;
  loop.descriptor(1000, kFirst);
  loop.frame(kFirst, 200, kMac, 50, std::byte{1});
  loop.frame(kFirst + 200, static_cast<std::uint32_t>(-200), kMac, 50, std::byte{2});
  V3BlockReader reader(loop.span());
  EXPECT_EQ(read_all(loop, reader).size(), 2u);
  EXPECT_TRUE(reader.malformed());
}

TEST(V3BlockTest, BlockShorterThanItsDescriptorHasNoFrames) {
  std::vector<std::byte> tiny(20, std::byte{0xFF});
  V3BlockReader reader(tiny);
  EXPECT_TRUE(reader.next().empty());
  EXPECT_TRUE(reader.malformed());
  V3BlockReader none(std::span<const std::byte>{});
  EXPECT_TRUE(none.next().empty());
}

TEST(V3BlockTest, RandomBytesNeverLeadOutsideTheBlock) {
  std::mt19937 random(14);
  for (int round = 0; round < 20000; ++round) {
    Block block;
    for (std::byte& b : block.bytes) b = static_cast<std::byte>(random());
    // Plausible small values half of the time, so the walk goes some way.
    if (round % 2 == 0) {
      block.descriptor(random() % 64, static_cast<std::uint32_t>(kFirst + 8 * (random() % 8)));
      for (std::size_t at = kFirst; at + sizeof(tpacket3_hdr) < kBlock; at += 8 * (1 + random() % 40)) {
        block.frame(at, static_cast<std::uint32_t>(8 * (random() % 80)), static_cast<std::uint16_t>(random() % 200),
                    static_cast<std::uint32_t>(random() % 700), std::byte{5});
      }
    }
    V3BlockReader reader(block.span());
    read_all(block, reader);
  }
}

// ---- geometry ----

TEST(RingGeometryTest, SlotsFitBlocksAndBlocksArePowersOfTwo) {
  for (std::size_t frame : {60u, 1514u, 9014u, 16398u, 65549u}) {
    for (std::size_t frames : {1u, 16u, 500u, 20000u}) {
      RingGeometry geometry = ring_geometry(TPACKET_ALIGN(TPACKET2_HDRLEN + 16), frame, frames);
      EXPECT_GE(geometry.slot, TPACKET_ALIGN(TPACKET2_HDRLEN + 16) + frame);
      EXPECT_EQ(geometry.slot % TPACKET_ALIGNMENT, 0u);
      EXPECT_TRUE(std::has_single_bit(geometry.block));
      EXPECT_EQ(geometry.block % 4096, 0u);
      EXPECT_GE(geometry.slots_per_block, 1u);
      EXPECT_GE(geometry.slots(), frames);
      std::size_t last = geometry.slots() - 1;
      EXPECT_LE(geometry.offset(last) % geometry.block + geometry.slot, geometry.block);
      EXPECT_LE(geometry.offset(last) + geometry.slot, geometry.bytes());
    }
  }
  // 64 KiB frames are not rounded up to 128 KiB slots.
  EXPECT_LT(ring_geometry(96, 65549, 16).slot, 66000u);
}

TEST(RingGeometryTest, BlocksAreSmall) {
  // Blocks are contiguous kernel pages, slow to find on a busy machine: 128 KiB for
  // frames up to ~40 KiB, 256 KiB (3 slots) for 64 KiB frames.
  EXPECT_EQ(ring_geometry(96, 4000, 500).block, 128u << 10);
  EXPECT_EQ(ring_geometry(96, 1514, 20000).block, 128u << 10);
  EXPECT_EQ(ring_geometry(96, 16398, 100).block, 128u << 10);
  RingGeometry large = ring_geometry(96, 65549, 16);
  EXPECT_EQ(large.block, 256u << 10);
  EXPECT_EQ(large.slots_per_block, 3u);
}

// ---- live on lo: two transports as threads ----

struct Collect : FrameSink {
  std::vector<std::vector<std::byte>> frames;
  void on_frame(int, std::span<const std::byte> frame) override { frames.emplace_back(frame.begin(), frame.end()); }
  void on_peer_lost(int peer, std::string_view why) override { ADD_FAILURE() << peer << ": " << why; }
};

// A sink that asks for every frame's payload (past a 16-byte head) in a room of its own,
// as the reliable channel does during a bulk transfer, and keeps frames put back together.
struct PlacingCollect : Collect {
  static constexpr std::size_t kHead = 16;
  std::vector<std::byte> room;
  std::size_t body = 0;
  std::size_t placed = 0, offered = 0;
  std::vector<int> senders;  // the pid the transport named for each placed frame
  std::size_t placement_head() const override { return kHead; }
  DatagramRoom datagram_room(std::size_t frame_size, std::size_t count) override {
    EXPECT_GE(count, 1u);
    body = frame_size - kHead;
    room.assign(count * body, std::byte{0});
    ++offered;
    return {0, room};
  }
  void on_datagram_placed(int from, std::span<const PlacedFrame> placed_frames) override {
    for (std::size_t i = 0; i < placed_frames.size(); ++i) {
      const PlacedFrame& frame = placed_frames[i];
      EXPECT_EQ(frame.head.size(), kHead);
      EXPECT_EQ(frame.payload.data(), room.data() + i * body);  // frame i's part of the room
      EXPECT_LE(frame.payload.size(), body);
      std::vector<std::byte> whole(frame.head.begin(), frame.head.end());
      whole.insert(whole.end(), frame.payload.begin(), frame.payload.end());
      frames.push_back(std::move(whole));
      senders.push_back(from);
      ++placed;
    }
  }
};

// Frames carry the filter's fields (job at 4, destination pid at 10) and a pattern
// telling their number and every byte.
std::vector<std::byte> test_frame(std::uint32_t job, int to, std::size_t size, int number) {
  std::vector<std::byte> frame(size);
  for (std::size_t i = 0; i < size; ++i) frame[i] = static_cast<std::byte>((i * 7 + number * 13) & 0xFF);
  std::memcpy(frame.data() + 4, &job, 4);
  std::uint16_t dst = static_cast<std::uint16_t>(to);
  std::memcpy(frame.data() + 10, &dst, 2);
  frame[12] = static_cast<std::byte>(number);
  return frame;
}

// Sends 96 frames from pid 0 to pid 1 over lo and checks each arrives whole; returns the job id.
std::uint32_t transfer(const char* rx, const char* tx, Collect* sink = nullptr) {
  using namespace std::chrono_literals;
  static std::uint32_t jobs = 0;
  const std::uint32_t job = (static_cast<std::uint32_t>(::getpid()) + ++jobs) * 2654435761u ^ 0x72696e67u;
  std::vector<std::unique_ptr<Transport>> ends;
  for (int pid = 0; pid < 2; ++pid) {
    TransportConfig config;
    config.pid = pid;
    config.nprocs = 2;
    config.job_id = job;
    config.options = {{"iface", "lo"}, {"nic_rx", rx}, {"nic_tx", tx}};
    config.receive_filter = {{4, 4, job}, {10, 2, static_cast<std::uint32_t>(pid)}};
    ends.push_back(make_nic_transport(config));
  }
  const std::size_t mtu = ends[0]->capabilities().mtu;
  EXPECT_EQ(mtu, 65535u);  // lo's default: the largest frame
  std::vector<std::string> addresses{ends[0]->local_address(), ends[1]->local_address()};
  std::thread other([&] { ends[1]->connect(addresses); });
  ends[0]->connect(addresses);
  other.join();

  constexpr int kFrames = 96;  // 6 MiB: more than a V3 block and a transmit ring's worth
  Collect own;
  Collect& received = sink ? *sink : own;
  Collect none;
  auto deadline = std::chrono::steady_clock::now() + 10s;
  int sent = 0;
  std::vector<std::byte> frame;
  while (received.frames.size() < kFrames && std::chrono::steady_clock::now() < deadline) {
    if (sent < kFrames) {
      std::size_t size = sent % 3 == 0 ? mtu : 60 + static_cast<std::size_t>(sent) * 601 % (mtu - 60);
      frame = test_frame(job, 1, size, sent);
      if (ends[0]->send(1, frame) == SendStatus::sent) ++sent;
    } else {
      ends[0]->flush();
    }
    ends[1]->receive(received, 64);
    ends[0]->receive(none, 64);
  }
  EXPECT_EQ(received.frames.size(), static_cast<std::size_t>(kFrames)) << "lo lost frames";
  EXPECT_TRUE(none.frames.empty());
  for (const auto& got : received.frames) {
    int number = static_cast<int>(got[12]);
    std::size_t size = number % 3 == 0 ? mtu : 60 + static_cast<std::size_t>(number) * 601 % (mtu - 60);
    EXPECT_EQ(got, test_frame(job, 1, size, number)) << "frame " << number;
  }
  return job;
}

TEST(NicLiveTest, FullSizeFramesArriveWholeV2Send) {
  if (!may_open_packet_sockets()) GTEST_SKIP() << "needs CAP_NET_RAW (root) for packet sockets";
  transfer("v2", "send");
}
TEST(NicLiveTest, FullSizeFramesArriveWholeV3Send) {
  if (!may_open_packet_sockets()) GTEST_SKIP() << "needs CAP_NET_RAW (root) for packet sockets";
  transfer("v3", "send");
}
TEST(NicLiveTest, FullSizeFramesArriveWholeV2Ring) {
  if (!may_open_packet_sockets()) GTEST_SKIP() << "needs CAP_NET_RAW (root) for packet sockets";
  transfer("v2", "ring");
}
TEST(NicLiveTest, FullSizeFramesArriveWholeRecv) {
  if (!may_open_packet_sockets()) GTEST_SKIP() << "needs CAP_NET_RAW (root) for packet sockets";
  transfer("recv", "send");
}

// rx=recv with a sink that places: every frame longer than the head is read with its
// payload in the sink's room, named as sent by pid 0 (on lo the source MAC says the pid).
TEST(NicLiveTest, RecvPlacesPayloadsWhereTheSinkAsks) {
  if (!may_open_packet_sockets()) GTEST_SKIP() << "needs CAP_NET_RAW (root) for packet sockets";
  PlacingCollect sink;
  transfer("recv", "send", &sink);
  EXPECT_EQ(sink.placed, sink.frames.size());
  EXPECT_GE(sink.placed, 96u);
  for (int from : sink.senders) EXPECT_EQ(from, 0);
}

// Frames of our type and job, addressed to pid 1, but longer than the MTU the transport
// was given (lo's own MTU lets them through): dropped by every receive mode (the ring's
// slot would cut them short; V3 and recvmsg would hand them over whole), while a frame of
// a good length behind them arrives.
void drops_frames_longer_than_the_mtu(const char* rx, Collect* sink = nullptr) {
  using namespace std::chrono_literals;
  const std::uint32_t job = (static_cast<std::uint32_t>(::getpid()) * 2654435761u) ^ 0x6c6f6e67u;
  TransportConfig config;
  config.pid = 1;
  config.nprocs = 2;
  config.job_id = job;
  config.options = {{"iface", "lo"}, {"nic_rx", rx}, {"mtu", "1500"}};
  config.receive_filter = {{4, 4, job}, {10, 2, 1u}};
  std::unique_ptr<Transport> receiver = make_nic_transport(config);
  ASSERT_EQ(receiver->capabilities().mtu, 1500u);
  int raw = ::socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
  ASSERT_GE(raw, 0) << std::strerror(errno);
  sockaddr_ll to{};
  to.sll_family = AF_PACKET;
  to.sll_ifindex = find_interface("lo").index;
  to.sll_halen = 6;
  const std::uint16_t type = data_ether_type(true, 1);
  auto send_raw = [&](std::size_t size, int number) {
    std::vector<std::byte> frame(kEthernetHeader);
    frame[12] = static_cast<std::byte>(type >> 8);
    frame[13] = static_cast<std::byte>(type & 0xFF);
    std::vector<std::byte> body = test_frame(job, 1, size, number);
    frame.insert(frame.end(), body.begin(), body.end());
    ASSERT_EQ(::sendto(raw, frame.data(), frame.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to),
              static_cast<ssize_t>(frame.size()))
        << std::strerror(errno);
  };
  for (std::size_t size : {1501u, 3000u, 9000u, 60000u}) send_raw(size, 1);
  send_raw(1500, 2);  // the largest good one
  send_raw(100, 3);
  Collect own;
  Collect& received = sink ? *sink : own;
  auto deadline = std::chrono::steady_clock::now() + 60s;  // a guard: the frames arrive within milliseconds
  // A V3 block not yet full is handed over after 1 ms: wait for the last good frame.
  while (std::chrono::steady_clock::now() < deadline &&
         (received.frames.empty() || received.frames.back().size() != 100)) {
    receiver->receive(received, 64);
  }
  ::close(raw);
  ASSERT_EQ(received.frames.size(), 2u) << rx;
  EXPECT_EQ(received.frames[0], test_frame(job, 1, 1500, 2)) << rx;
  EXPECT_EQ(received.frames[1], test_frame(job, 1, 100, 3)) << rx;
  EXPECT_NE(nic_stats(*receiver).find(" nic_length_dropped=4 "), std::string::npos) << nic_stats(*receiver);
}

TEST(NicLiveTest, FramesLongerThanTheMtuAreDroppedV2) {
  if (!may_open_packet_sockets()) GTEST_SKIP() << "needs CAP_NET_RAW (root) for packet sockets";
  drops_frames_longer_than_the_mtu("v2");
}
TEST(NicLiveTest, FramesLongerThanTheMtuAreDroppedV3) {
  if (!may_open_packet_sockets()) GTEST_SKIP() << "needs CAP_NET_RAW (root) for packet sockets";
  drops_frames_longer_than_the_mtu("v3");
}
TEST(NicLiveTest, FramesLongerThanTheMtuAreDroppedRecv) {
  if (!may_open_packet_sockets()) GTEST_SKIP() << "needs CAP_NET_RAW (root) for packet sockets";
  drops_frames_longer_than_the_mtu("recv");
}
// The same read scattered into a placing sink's room: the long frames' bytes that fell in
// the room are dropped with them, and the good frames behind them arrive whole, placed or
// put back together.
TEST(NicLiveTest, FramesLongerThanTheMtuAreDroppedRecvPlacing) {
  if (!may_open_packet_sockets()) GTEST_SKIP() << "needs CAP_NET_RAW (root) for packet sockets";
  PlacingCollect sink;
  drops_frames_longer_than_the_mtu("recv", &sink);
  EXPECT_GE(sink.offered, 1u);
}

// On lo the data frames to pid 1 carry pid 1's own EtherType (so the kernel offers them to
// pid 1's socket only, not to every process's filter): a sniffer on lo that takes every
// frame finds the job's frames (not the segment check's probes) all of that type.
TEST(NicLiveTest, FramesOnLoCarryTheDestinationsEtherType) {
  if (!may_open_packet_sockets()) GTEST_SKIP() << "needs CAP_NET_RAW (root) for packet sockets";
  int sniffer = ::socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, htons(ETH_P_ALL));
  ASSERT_GE(sniffer, 0) << std::strerror(errno);
  int size = 64 << 20;
  ::setsockopt(sniffer, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size);
  sockaddr_ll address{};
  address.sll_family = AF_PACKET;
  address.sll_protocol = htons(ETH_P_ALL);
  address.sll_ifindex = find_interface("lo").index;
  ASSERT_EQ(::bind(sniffer, reinterpret_cast<sockaddr*>(&address), sizeof address), 0) << std::strerror(errno);
  const std::uint32_t job = transfer("v2", "send");
  std::vector<std::byte> packet(1 << 17);
  int frames = 0;
  for (;;) {
    ssize_t got = ::recv(sniffer, packet.data(), packet.size(), MSG_TRUNC);
    if (got < 0) break;
    if (got < static_cast<ssize_t>(kEthernetHeader + 8)) continue;
    std::uint32_t frame_job;
    std::memcpy(&frame_job, packet.data() + kEthernetHeader + 4, 4);
    std::uint16_t type = static_cast<std::uint16_t>(std::to_integer<int>(packet[12]) << 8 |
                                                    std::to_integer<int>(packet[13]));
    if (frame_job != job || type == kProbeEtherType) continue;
    ++frames;
    EXPECT_EQ(type, data_ether_type(true, 1)) << "frame " << frames;
  }
  ::close(sniffer);
  EXPECT_GE(frames, 96);  // seen going out and coming in
  EXPECT_NE(data_ether_type(true, 0), data_ether_type(true, 1));
  EXPECT_EQ(data_ether_type(false, 1), kEtherType);
}

// Makes poll(2) and ppoll(2) fail with ENOSYS in this process from now on (seccomp).
bool forbid_poll() {
  sock_filter program[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_poll, 2, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_ppoll, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
  };
  sock_fprog filter{static_cast<unsigned short>(sizeof program / sizeof program[0]), program};
  return ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 && ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &filter) == 0;
}

// While a superstep waits, the reliable layer asks ready() between yields. With the V2
// ring it reads the next slot's status in memory: a poll(2) there took the socket's
// receive-queue lock, which the kernel takes to fill the ring in the sending CPU's
// softirq. Checked in a child where poll(2) fails: ready() is false before the frame
// and true once it is in the ring, and receive() then hands it over. The transports
// whose ready() does ask poll(2) (v3 blocks, recvmsg) say so.
TEST(NicLiveTest, V2RingTellsAFrameArrivedWithoutASystemCall) {
  if (!may_open_packet_sockets()) GTEST_SKIP() << "needs CAP_NET_RAW (root) for packet sockets";
  const std::uint32_t job = static_cast<std::uint32_t>(::getpid()) * 2654435761u ^ 0x72656479u;
  auto make = [&](int pid, const char* rx) {
    TransportConfig config;
    config.pid = pid;
    config.nprocs = 2;
    config.job_id = job;
    config.options = {{"iface", "lo"}, {"nic_rx", rx}, {"nic_tx", "send"}};
    config.receive_filter = {{4, 4, job}, {10, 2, static_cast<std::uint32_t>(pid)}};
    return make_nic_transport(config);
  };
  EXPECT_FALSE(make(1, "v3")->capabilities().ready_in_memory);
  EXPECT_FALSE(make(1, "recv")->capabilities().ready_in_memory);
  const auto setup_started = std::chrono::steady_clock::now();
  std::vector<std::unique_ptr<Transport>> ends;
  ends.push_back(make(0, "v2"));
  ends.push_back(make(1, "v2"));
  EXPECT_TRUE(ends[1]->capabilities().ready_in_memory);
  std::vector<std::string> addresses{ends[0]->local_address(), ends[1]->local_address()};
  std::thread other([&] { ends[1]->connect(addresses); });
  ends[0]->connect(addresses);
  other.join();
  // One frame on lo takes microseconds; what bounds the wait for it is a multiple of the
  // set-up just done on this machine (sockets, rings, the connect handshake).
  const auto setup = std::chrono::steady_clock::now() - setup_started;
  const int bound_ms = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(200 * setup).count()) + 1;
  Collect drained;
  ends[1]->receive(drained, 1024);  // whatever the set-up left
  const std::vector<std::byte> frame = test_frame(job, 1, 1000, 7);
  // The parent, free to poll(2), sees the frame reach the ring and tells the child, which
  // may not poll; the child's end of `child_gone` closes when it exits.
  int arrived[2], child_gone[2];
  ASSERT_EQ(::pipe(arrived), 0) << std::strerror(errno);
  ASSERT_EQ(::pipe(child_gone), 0) << std::strerror(errno);
  ::fflush(nullptr);
  pid_t child = ::fork();
  ASSERT_GE(child, 0) << std::strerror(errno);
  if (child == 0) {
    // 1: no seccomp; 2: ready() before any frame; 3: the frame is in the ring but ready()
    // does not say so; 4: receive(); 5: send; 6: the parent gave up on the frame.
    ::close(child_gone[0]);
    if (!forbid_poll()) std::_Exit(1);
    if (ends[1]->ready()) std::_Exit(2);
    if (ends[0]->send(1, frame) != SendStatus::sent) std::_Exit(5);
    ends[0]->flush();
    char word = 0;
    if (::read(arrived[0], &word, 1) != 1) std::_Exit(6);
    if (!ends[1]->ready()) std::_Exit(3);
    struct One : FrameSink {
      std::vector<std::byte> got;
      void on_frame(int, std::span<const std::byte> f) override { got.assign(f.begin(), f.end()); }
      void on_peer_lost(int, std::string_view) override {}
    } one;
    if (ends[1]->receive(one, 1) != 1 || one.got != frame) std::_Exit(4);
    std::_Exit(0);
  }
  ::close(child_gone[1]);
  ::close(arrived[0]);
  pollfd watched[2] = {{ends[1]->wait_fd(), POLLIN, 0}, {child_gone[0], POLLIN, 0}};
  const int seen = ::poll(watched, 2, bound_ms);
  const bool in_ring = seen > 0 && (watched[0].revents & POLLIN) != 0;
  EXPECT_TRUE(in_ring || (watched[1].revents & (POLLIN | POLLHUP)) != 0)
      << "no frame reached the ring within " << bound_ms << " ms (200x this run's set-up)";
  if (in_ring) {
    EXPECT_EQ(::write(arrived[1], "!", 1), 1);
  }
  ::close(arrived[1]);  // else the child's read ends: exit 6
  ::close(child_gone[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "child ended by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: seccomp refused, 2: ready() before any frame, 3: the frame is in the ring "
                                       "but ready() says none (did it ask poll?), 4: receive() did not hand the frame "
                                       "over, 5: send, 6: no frame reached the ring";
}

}  // namespace
}  // namespace bsp::transport::nic
