// tests/recovery/udp_placement_test.cc: datagram placement (transport.h): the
// reliable channel lets udp read a bulk transfer's payloads straight to the end of the
// receiver's stream, and keeps only frames that verified, in order. First over a scripted
// transport that places hostile datagrams exactly as udp does (forged, damaged, reordered,
// duplicated, truncated, from a stranger, several frames per datagram): the stream must
// hold exactly the genuine payloads in order. Then over real udp sockets on loopback, two
// channels in one thread, plain, through the fault transport, with a stranger spraying the
// receiver's port, and with Ethernet-sized frames read several per call: the stream is
// exact and frames were placed.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "recovery/channel.h"
#include "recovery/frame_codec.h"
#include "recovery/reliable_channel.h"
#include "recovery/wire.h"
#include "transport/registry.h"

namespace bsp::recovery {
namespace {

using namespace std::chrono_literals;
using transport::FrameSink;

constexpr std::uint32_t kJob = 4711;

auth::Key secret_of(std::uint8_t seed) {
  auth::Key key{};
  for (std::size_t i = 0; i < key.size(); ++i) key[i] = static_cast<std::uint8_t>(seed + i * 7);
  return key;
}

// The engine's side of placement, as bsplib/engine.cc does it: one byte stream per peer,
// room handed out past its end, stored only when confirmed. Room beyond the end is filled
// with a marker first, so bytes that were placed and not confirmed can never pass unseen.
class StreamSink final : public PayloadSink {
 public:
  explicit StreamSink(int nprocs) : streams(static_cast<std::size_t>(nprocs)), placing(streams.size(), 0) {}
  void on_payload(int peer, std::span<const std::byte> payload) override {
    EXPECT_EQ(placing[static_cast<std::size_t>(peer)], 0u) << "a payload while room was outstanding";
    auto& stream = streams[static_cast<std::size_t>(peer)];
    stream.insert(stream.end(), payload.begin(), payload.end());
    ++payloads;
  }
  void on_peer_lost(int, std::string_view why) override { lost = std::string(why); }
  std::span<std::byte> payload_room(int peer, std::size_t size) override {
    auto& stream = streams[static_cast<std::size_t>(peer)];
    auto& area = rooms[peer];
    if (area.size() < size) area.resize(size);
    // Asked again while room is outstanding (a verified prefix confirmed): the same place.
    if (placing[static_cast<std::size_t>(peer)] == 0) std::fill(area.begin(), area.end(), std::byte{0xEE});
    placing[static_cast<std::size_t>(peer)] = size;
    room_end[peer] = stream.size();
    return {area.data(), size};
  }
  void on_payload_placed(int peer) override {
    auto& stream = streams[static_cast<std::size_t>(peer)];
    std::size_t size = placing[static_cast<std::size_t>(peer)];
    ASSERT_GT(size, 0u);
    ASSERT_EQ(room_end[peer], stream.size());
    stream.insert(stream.end(), rooms[peer].begin(), rooms[peer].begin() + static_cast<std::ptrdiff_t>(size));
    placing[static_cast<std::size_t>(peer)] = 0;
    ++placed_payloads;
  }
  void payload_abandoned(int peer) override { placing[static_cast<std::size_t>(peer)] = 0; }

  std::vector<std::vector<std::byte>> streams;
  std::vector<std::size_t> placing;
  std::map<int, std::vector<std::byte>> rooms;
  std::map<int, std::size_t> room_end;
  std::size_t payloads = 0, placed_payloads = 0;
  std::string lost;
};

// A data frame from `src` to `dst`, sealed with `secret`.
std::vector<std::byte> data_frame(const auth::Key& secret, int src, int dst, std::uint32_t seq,
                                  std::span<const std::byte> payload) {
  std::vector<std::byte> frame(wire::kHeaderSize + payload.size());
  wire::Header header{};
  header.type = static_cast<std::uint8_t>(wire::FrameType::data);
  header.job_id = kJob;
  header.src = static_cast<std::uint16_t>(src);
  header.dst = static_cast<std::uint16_t>(dst);
  header.seq = seq;
  std::memcpy(frame.data(), &header, wire::kHeaderSize);
  std::memcpy(frame.data() + wire::kHeaderSize, payload.data(), payload.size());
  wire::seal_frame(frame, wire::frame_key(secret));
  return frame;
}

std::vector<std::byte> payload_number(std::size_t i, std::size_t size) {
  std::vector<std::byte> bytes(size);
  for (std::size_t k = 0; k < size; ++k) bytes[k] = static_cast<std::byte>((i * 131 + k * 7 + (k >> 8)) & 0xFF);
  return bytes;
}

// One datagram of the script: its frames, the sender's pid as the socket tells it.
struct Datagram {
  int from = 1;
  std::vector<std::vector<std::byte>> frames;
};

// Plays datagrams the way udp's receive does: asks the sink for room for `per_datagram`
// frames of mtu bytes; when given, scatters each frame's header into its own buffer and its
// payload to room + i * (mtu - header) (a frame longer than mtu is the shape the room was
// not made for: the room is given back and the frames go by on_frame).
class ScriptTransport final : public transport::Transport {
 public:
  ScriptTransport(std::size_t mtu, std::size_t per_datagram, std::deque<Datagram>* script)
      : mtu_(mtu), per_datagram_(per_datagram), script_(script) {}
  std::string_view name() const override { return "script"; }
  transport::Capabilities capabilities() const override { return {mtu_, false}; }
  std::string local_address() override { return "script"; }
  void connect(const std::vector<std::string>&) override {}
  transport::SendStatus send(int, std::span<const std::byte>) override { return transport::SendStatus::sent; }
  bool flush() override { return true; }
  int wait_fd() const override { return -1; }

  std::size_t receive(FrameSink& sink, std::size_t max_frames) override {
    std::size_t delivered = 0;
    while (delivered < max_frames && !script_->empty()) {
      Datagram datagram = std::move(script_->front());
      script_->pop_front();
      const std::size_t head = sink.placement_head();
      FrameSink::DatagramRoom offer = head > 0 ? sink.datagram_room(mtu_, per_datagram_) : FrameSink::DatagramRoom{};
      bool fits = datagram.frames.size() <= per_datagram_;
      for (const auto& frame : datagram.frames) fits = fits && frame.size() <= mtu_;
      if (!offer.room.empty() && fits) {
        heads_.assign(per_datagram_ * head, std::byte{0});
        std::vector<FrameSink::PlacedFrame> placed;
        const std::size_t body = mtu_ - head;
        for (std::size_t i = 0; i < datagram.frames.size(); ++i) {
          const auto& frame = datagram.frames[i];
          const std::size_t in_head = std::min(frame.size(), head);
          std::memcpy(heads_.data() + i * head, frame.data(), in_head);
          const std::size_t rest = frame.size() - in_head;
          std::memcpy(offer.room.data() + i * body, frame.data() + in_head, rest);
          placed.push_back({std::span<const std::byte>(heads_.data() + i * head, in_head),
                            std::span<const std::byte>(offer.room.data() + i * body, rest)});
        }
        ++placed_reads;
        sink.on_datagram_placed(datagram.from, placed);
      } else {
        if (!offer.room.empty()) sink.on_datagram_placed(datagram.from, {});
        for (const auto& frame : datagram.frames) sink.on_frame(datagram.from, frame);
      }
      delivered += datagram.frames.size();
    }
    return delivered;
  }

  std::size_t placed_reads = 0;

 private:
  std::size_t mtu_, per_datagram_;
  std::deque<Datagram>* script_;
  std::vector<std::byte> heads_;
};

class ScriptedPlacement : public ::testing::Test {
 protected:
  static constexpr std::size_t kMtu = 1040;  // payloads of 1000 bytes
  static constexpr std::size_t kPayload = kMtu - wire::kHeaderSize;

  void SetUp() override {
    auto owned = std::make_unique<ScriptTransport>(kMtu, 4, &script);
    transport = owned.get();
    ChannelConfig config;
    config.pid = 0;
    config.nprocs = 3;
    config.job_id = kJob;
    config.buffers = 64;
    config.spin_us = 0;
    config.secret = secret;
    channel = make_reliable_channel(std::move(owned), config);
  }

  std::vector<std::byte> frame(std::uint32_t seq, int src = 1) {
    return data_frame(secret, src, 0, seq, payload_number(seq + 1000 * static_cast<std::size_t>(src), kPayload));
  }
  // The payloads 0 .. count - 1 of peer src, in order.
  std::vector<std::byte> expected(std::size_t count, int src = 1) {
    std::vector<std::byte> all;
    for (std::size_t seq = 0; seq < count; ++seq) {
      auto bytes = payload_number(seq + 1000 * static_cast<std::size_t>(src), kPayload);
      all.insert(all.end(), bytes.begin(), bytes.end());
    }
    return all;
  }
  void run() {
    for (int i = 0; i < 100 && !script.empty(); ++i) channel->progress(sink);
    ASSERT_TRUE(script.empty());
    EXPECT_TRUE(sink.lost.empty()) << sink.lost;
  }

  auth::Key secret = secret_of(3);
  std::deque<Datagram> script;
  ScriptTransport* transport = nullptr;
  std::unique_ptr<Channel> channel;
  StreamSink sink{3};
};

TEST_F(ScriptedPlacement, InOrderFullFramesArePlacedWithoutACopy) {
  script.push_back({1, {frame(0)}});  // the first full frame shows a bulk transfer: not placed yet
  for (std::uint32_t seq = 1; seq < 41; seq += 4)
    script.push_back({1, {frame(seq), frame(seq + 1), frame(seq + 2), frame(seq + 3)}});
  run();
  EXPECT_EQ(sink.streams[1], expected(41));
  EXPECT_EQ(channel->stats().placed, 40u);
  // The first went by on_frame, copied into the stream's room by its MAC's pass; the
  // rest were placed by the transport, one confirmation per datagram.
  EXPECT_EQ(sink.payloads, 0u);
  EXPECT_EQ(channel->stats().copied_in_place, 1u);
  EXPECT_EQ(sink.placed_payloads, 11u);
  EXPECT_EQ(channel->stats().data_received, 41u);
}

// A frame that is the next in order by its header, but whose payload was changed after it
// was sealed (a forgery, or damage): it lands in the room and must never be stored.
TEST_F(ScriptedPlacement, ForgedNextFrameIsNeverStored) {
  script.push_back({1, {frame(0)}});
  auto forged = frame(1);
  forged[wire::kHeaderSize + 10] ^= std::byte{0x40};
  script.push_back({1, {forged}});
  auto resealed_elsewhere = data_frame(secret_of(9), 1, 0, 1, payload_number(77, kPayload));  // another key
  script.push_back({1, {resealed_elsewhere}});
  script.push_back({1, {frame(1), frame(2)}});
  run();
  EXPECT_EQ(sink.streams[1], expected(3));
  EXPECT_EQ(channel->stats().placed, 2u);
  EXPECT_EQ(channel->stats().corrupt_dropped + channel->stats().foreign_dropped, 2u);
}

// Frames in one datagram behind a bad one are still taken (by copy), in order.
TEST_F(ScriptedPlacement, GoodFramesAfterABadOneInTheSameDatagram) {
  script.push_back({1, {frame(0)}});
  auto damaged = frame(2);
  damaged[5] ^= std::byte{1};
  script.push_back({1, {frame(1), damaged, frame(2), frame(3)}});
  script.push_back({1, {frame(4)}});
  run();
  EXPECT_EQ(sink.streams[1], expected(5));
  EXPECT_EQ(channel->stats().placed, 2u);  // 1 (before the damaged one) and 4
  EXPECT_EQ(channel->stats().data_received, 5u);
}

TEST_F(ScriptedPlacement, ReorderedAndDuplicatedDatagrams) {
  script.push_back({1, {frame(0)}});
  script.push_back({1, {frame(2), frame(3)}});  // ahead of a gap: held, copied
  script.push_back({1, {frame(1)}});            // fills it: the held ones follow by on_payload
  script.push_back({1, {frame(2), frame(3)}});  // duplicates
  script.push_back({1, {frame(4), frame(4), frame(5)}});
  script.push_back({1, {frame(0)}});
  script.push_back({1, {frame(6)}});
  run();
  EXPECT_EQ(sink.streams[1], expected(7));
  EXPECT_EQ(channel->stats().duplicates_received, 4u);
  EXPECT_EQ(channel->stats().placed, 2u);  // 4 and 6 (1 came while 2 and 3 were held)
}

TEST_F(ScriptedPlacement, TruncatedAndShortFramesAreDropped) {
  script.push_back({1, {frame(0)}});
  auto cut = frame(1);
  cut.resize(cut.size() - 100);  // its header's length disagrees
  auto stub = frame(1);
  stub.resize(20);  // not even a header
  script.push_back({1, {cut, stub}});
  script.push_back({1, {std::vector<std::byte>{}}});
  script.push_back({1, {frame(1)}});
  run();
  EXPECT_EQ(sink.streams[1], expected(2));
  EXPECT_EQ(channel->stats().malformed_dropped, 3u);
  EXPECT_EQ(channel->stats().placed, 1u);
}

// A genuine frame of peer 1 replayed from an address that is no member's, and frames of
// peer 2 while the room was made for peer 1: the first is foreign, the others go to peer 2.
TEST_F(ScriptedPlacement, OtherSendersNeverFillAPeersRoom) {
  script.push_back({1, {frame(0)}});
  script.push_back({transport::kNotAMember, {frame(1)}});
  script.push_back({2, {frame(0, 2), frame(1, 2)}});
  script.push_back({2, {frame(1)}});  // peer 1's frame from peer 2's address: an impostor
  script.push_back({1, {frame(1), frame(2)}});
  run();
  EXPECT_EQ(sink.streams[1], expected(3));
  EXPECT_EQ(sink.streams[2], expected(2, 2));
  EXPECT_EQ(channel->stats().foreign_dropped, 2u);
}

// ---------------------------------------------------------------- real udp sockets

struct Pair {
  std::unique_ptr<Channel> sender, receiver;
  std::string receiver_address;
};

Pair udp_pair(std::map<std::string, std::string> sender_options) {
  std::vector<std::unique_ptr<transport::Transport>> transports;
  std::vector<std::string> addresses;
  for (int pid = 0; pid < 2; ++pid) {
    auto options = sender_options;
    if (pid != 0) options.erase("fault");  // faults on the sending side only
    transports.push_back(transport::create_transport("udp", transport::TransportConfig{pid, 2, kJob, options}));
    addresses.push_back(transports.back()->local_address());
  }
  Pair pair;
  pair.receiver_address = addresses[1];
  for (int pid = 0; pid < 2; ++pid) {
    transports[static_cast<std::size_t>(pid)]->connect(addresses);
    ChannelConfig config;
    config.pid = pid;
    config.nprocs = 2;
    config.job_id = kJob;
    config.spin_us = 0;
    config.secret = secret_of(5);
    (pid == 0 ? pair.sender : pair.receiver) = make_reliable_channel(
        std::move(transports[static_cast<std::size_t>(pid)]), config);
  }
  return pair;
}

// Sends `count` payloads (full ones, and every 97th short) from pid 0 to pid 1 while a
// stranger (if `spray`) sends junk and replays of a genuine-looking header to pid 1's port.
void stream_and_check(std::map<std::string, std::string> sender_options, bool spray, std::size_t count) {
  const bool faulty = sender_options.count("fault") > 0;
  Pair pair = udp_pair(std::move(sender_options));
  StreamSink sender_sink(2), receiver_sink(2);
  const std::size_t full = pair.sender->max_payload();
  ASSERT_GT(full, 1000u);
  std::vector<std::byte> want;
  int stranger = -1;
  sockaddr_in target{};
  if (spray) {
    stranger = ::socket(AF_INET, SOCK_DGRAM, 0);
    ASSERT_GE(stranger, 0);
    auto colon = pair.receiver_address.rfind(':');
    target.sin_family = AF_INET;
    ::inet_pton(AF_INET, pair.receiver_address.substr(0, colon).c_str(), &target.sin_addr);
    target.sin_port = htons(static_cast<std::uint16_t>(std::stoi(pair.receiver_address.substr(colon + 1))));
  }
  auto forged = data_frame(secret_of(6), 0, 1, 0, payload_number(5, full));  // wrong key
  std::size_t sent = 0, sprayed = 0;
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while ((sent < count || !pair.sender->all_acknowledged() || receiver_sink.streams[0].size() < want.size()) &&
         std::chrono::steady_clock::now() < deadline) {
    while (sent < count) {
      auto payload = payload_number(sent, sent % 97 == 96 ? 333 : full);
      if (pair.sender->send(1, payload) != SendResult::ok) break;
      want.insert(want.end(), payload.begin(), payload.end());
      ++sent;
    }
    if (stranger >= 0 && sprayed < 300) {
      ++sprayed;
      wire::Header header{};
      std::memcpy(&header, forged.data(), wire::kHeaderSize);
      header.seq = static_cast<std::uint32_t>(pair.receiver->stats().data_received);  // the next in order
      std::memcpy(forged.data(), &header, wire::kHeaderSize);
      wire::seal_frame(forged, wire::frame_key(secret_of(6)));  // intact, but not the job's key
      ::sendto(stranger, forged.data(), forged.size(), 0, reinterpret_cast<sockaddr*>(&target), sizeof target);
      ::sendto(stranger, forged.data(), 9, 0, reinterpret_cast<sockaddr*>(&target), sizeof target);
      // Longer than any frame (where the MTU leaves room): read whole, never placed.
      std::vector<std::byte> longer(std::min<std::size_t>(3 * forged.size(), 65000), std::byte{7});
      ::sendto(stranger, longer.data(), longer.size(), 0, reinterpret_cast<sockaddr*>(&target), sizeof target);
    }
    pair.sender->progress(sender_sink);
    pair.receiver->progress(receiver_sink);
    if (!pair.sender->probe() && !pair.receiver->probe()) {
      int awaited = 0;
      pair.receiver->wait(std::span(&awaited, 1), 200us);
    }
  }
  if (stranger >= 0) ::close(stranger);
  ASSERT_EQ(sent, count);
  EXPECT_TRUE(receiver_sink.lost.empty()) << receiver_sink.lost;
  ASSERT_EQ(receiver_sink.streams[0].size(), want.size());
  EXPECT_TRUE(receiver_sink.streams[0] == want) << "the placed stream differs from what was sent";
  // Under faults gaps are frequent, and a frame with frames held behind it is copied.
  EXPECT_GT(pair.receiver->stats().placed, faulty ? 0 : count / 4) << "bulk frames were not placed";
  if (spray) {
    EXPECT_GT(pair.receiver->stats().foreign_dropped, 0u);
    EXPECT_GT(pair.receiver->stats().malformed_dropped, 0u);
  }
}

TEST(UdpPlacement, BulkStreamIsPlacedExactly) { stream_and_check({}, false, 600); }

TEST(UdpPlacement, SmallFramesCoalescedByTheKernelArePlacedExactly) {
  stream_and_check({{"mtu", "8192"}}, false, 2000);
}

TEST(UdpPlacement, DropDuplicateReorderCorruptNeverReachTheStream) {
  stream_and_check({{"fault", "drop=0.05,dup=0.05,reorder=0.05,corrupt=0.05,seed=13"}}, false, 600);
}

TEST(UdpPlacement, StrangerSprayingThePortChangesNothing) { stream_and_check({}, true, 600); }

// Ethernet-sized frames the kernel does not coalesce (no segmentation), as between two
// hosts: several datagrams per read, each placed as a frame, a stranger's among them.
TEST(UdpPlacement, EthernetFramesReadSeveralAtATimeArePlacedExactly) {
  stream_and_check({{"mtu", "1472"}, {"gso", "0"}}, true, 4000);
}

}  // namespace
}  // namespace bsp::recovery
