// tests/recovery/active_links_test.cc: the protocol core's per-link sweeps visit only the
// links with work (so their cost does not grow with p): two cores of a 256-process job exchange frames on one link,
// and every progress step (service, next_deadline, output_pending, all_acknowledged)
// looks at a handful of links, not 255; a link whose work is done leaves the active set,
// and an awaited silent peer stays in it and is probed. Also the acks of such a link: with
// the 2-frame link window of p = 256, frames sent closer together than a retry interval
// share one ack, and a link gone quiet gets one ack, not a probe and its answer.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "recovery/protocol_core.h"
#include "recovery/wire.h"

namespace bsp::recovery {
namespace {

using namespace std::chrono_literals;

constexpr int kProcesses = 256;

class Capture final : public FrameOutput {
 public:
  std::size_t send_batch(std::span<const transport::OutFrame> frames) override {
    for (const transport::OutFrame& frame : frames) {
      sent.emplace_back(frame.peer, std::vector<std::byte>(frame.bytes.begin(), frame.bytes.end()));
    }
    return frames.size();
  }
  std::vector<std::pair<int, std::vector<std::byte>>> sent;
};

class CountingSink final : public PayloadSink {
 public:
  void on_payload(int, std::span<const std::byte>) override { ++payloads; }
  void on_peer_lost(int, std::string_view) override {}
  int payloads = 0;
};

CoreConfig config_for(int pid) {
  CoreConfig config;
  config.pid = pid;
  config.nprocs = kProcesses;
  config.job_id = 15;
  config.mtu = 8192;  // udp on lo: a pool of 4 (p - 1) frames, a 2-frame link window
  return config;
}

// Hands everything `from` sent to `to` (only pid 0 and 1 exist; other destinations are
// counted and dropped). Returns the frames for other pids.
int deliver(Capture& out, int from, ProtocolCore& to, int to_pid, CountingSink& sink) {
  int elsewhere = 0;
  for (auto& [peer, bytes] : out.sent) {
    if (peer == to_pid) {
      to.on_frame(from, bytes, sink);
    } else {
      ++elsewhere;
    }
  }
  out.sent.clear();
  return elsewhere;
}

TEST(ActiveLinksTest, ProgressOnOneLinkVisitsOnlyThatLink) {
  ManualClock clock;
  Capture out0, out1;
  ProtocolCore a(config_for(0), clock, out0);
  ProtocolCore b(config_for(1), clock, out1);
  CountingSink sink_a, sink_b;
  std::vector<std::byte> payload(100, std::byte{7});
  std::uint64_t most_per_step = 0;
  constexpr int kRounds = 200;
  for (int round = 0; round < kRounds; ++round) {
    std::uint64_t before = a.links_visited();
    ASSERT_EQ(a.send(1, payload), SendResult::ok);
    a.service();
    (void)a.next_deadline();
    (void)a.output_pending();
    (void)a.all_acknowledged();
    most_per_step = std::max(most_per_step, a.links_visited() - before);
    clock.advance(10us);
    EXPECT_EQ(deliver(out0, 0, b, 1, sink_b), 0);
    b.service();
    EXPECT_EQ(deliver(out1, 1, a, 0, sink_a), 0);
  }
  EXPECT_EQ(sink_b.payloads, kRounds);
  // service: transmit + timers; next_deadline + output_pending; all_acknowledged: one
  // active link each. A sweep over every link would visit 255 per loop.
  EXPECT_LE(most_per_step, 8u);
  // Drain: acks come back, and the idle link leaves the active set.
  for (int step = 0; step < 1000 && !a.all_acknowledged(); ++step) {
    clock.advance(std::max<Duration>(a.next_deadline() - clock.now(), 1us));
    a.service();
    deliver(out0, 0, b, 1, sink_b);
    b.service();
    deliver(out1, 1, a, 0, sink_a);
  }
  ASSERT_TRUE(a.all_acknowledged());
  a.service();
  b.service();
  EXPECT_EQ(a.active_links(), 0u);
  EXPECT_EQ(b.active_links(), 0u);
  EXPECT_EQ(a.next_deadline(), Time::max());
  EXPECT_FALSE(a.output_pending());
}

TEST(ActiveLinksTest, AwaitedSilentPeerStaysActiveAndIsProbed) {
  ManualClock clock;
  Capture out;
  ProtocolCore core(config_for(0), clock, out);
  const int awaited[] = {200};
  core.service_waiting(awaited);
  EXPECT_EQ(core.active_links(), 1u);
  ASSERT_NE(core.next_deadline(), Time::max());
  clock.advance(core.next_deadline() - clock.now());
  std::uint64_t before = core.links_visited();
  core.service_waiting(awaited);
  EXPECT_LE(core.links_visited() - before, 6u);
  ASSERT_EQ(out.sent.size(), 1u);
  EXPECT_EQ(out.sent[0].first, 200);
  EXPECT_EQ(core.stats().probes_sent, 1u);
  // No longer awaited: the link has nothing to do and leaves the set.
  core.service_waiting({});
  EXPECT_EQ(core.active_links(), 0u);
  EXPECT_EQ(core.next_deadline(), Time::max());
}

int probes_to(const Capture& out, int peer) {
  int probes = 0;
  for (const auto& [to, bytes] : out.sent) {
    wire::Header header;
    std::memcpy(&header, bytes.data(), wire::kHeaderSize);
    if (to == peer && header.type == static_cast<std::uint8_t>(wire::FrameType::probe)) ++probes;
  }
  return probes;
}

// One frame every `spacing` on link 0 -> 1 of a 256-process job, delivered at once; returns
// {explicit acks sent by 1, probes sent by 0 to 1}. awaiting: 0 and 1 wait for other
// pids meanwhile (as inside supersteps), then drain as bsp_end does (waiting for nobody).
std::pair<std::uint64_t, std::uint64_t> acks_for_paced_frames(int frames, Duration spacing, bool awaiting = false) {
  ManualClock clock;
  Capture out0, out1;
  ProtocolCore a(config_for(0), clock, out0);
  ProtocolCore b(config_for(1), clock, out1);
  CountingSink sink_a, sink_b;
  std::vector<std::byte> payload(64, std::byte{3});
  Duration step = 10us;
  Time next_send = clock.now();
  int sent = 0;
  std::uint64_t probes = 0;
  const int elsewhere[] = {2};
  for (int i = 0; i < 1000000 && (sent < frames || !a.all_acknowledged()); ++i) {
    if (sent < frames && clock.now() >= next_send) {
      EXPECT_EQ(a.send(1, payload), SendResult::ok) << "frame " << sent;
      ++sent;
      next_send += spacing;
    }
    if (awaiting && sent < frames) {
      a.service_waiting(elsewhere);
    } else if (awaiting) {
      a.service_waiting({});
    } else {
      a.service();
    }
    probes += static_cast<std::uint64_t>(probes_to(out0, 1));
    deliver(out0, 0, b, 1, sink_b);
    if (awaiting && sent < frames) {
      const int other[] = {3};
      b.service_waiting(other);
    } else if (awaiting) {
      b.service_waiting({});
    } else {
      b.service();
    }
    deliver(out1, 1, a, 0, sink_a);
    clock.advance(step);
  }
  EXPECT_EQ(sink_b.payloads, frames);
  EXPECT_TRUE(a.all_acknowledged());
  EXPECT_EQ(b.active_links(), 0u);
  return {b.stats().explicit_acks_sent, probes};
}

TEST(SmallWindowAcksTest, CloseFramesShareAnAck) {
  // 2-frame window: every frame used to ask for (and get) an ack of its own.
  auto [acks, probes] = acks_for_paced_frames(100, 100us);
  EXPECT_LE(acks, 60u);
  EXPECT_GE(acks, 40u);
  EXPECT_EQ(probes, 0u);
}

TEST(SmallWindowAcksTest, QuietLinkGetsOneAckNotAProbe) {
  auto [acks, probes] = acks_for_paced_frames(20, 30ms);
  EXPECT_LE(acks, 20u);
  EXPECT_EQ(probes, 0u);
}

// Inside a superstep (the engine waits for peers) a link carrying one frame per slow
// superstep, as the barrier's at p = 256, costs one ack per two frames and no probes.
TEST(SmallWindowAcksTest, WhileAwaitingPeersUnaskedFramesWaitForTheHalfWindowAck) {
  auto [acks, probes] = acks_for_paced_frames(20, 30ms, true);
  EXPECT_LE(acks, 11u);
  EXPECT_LE(probes, 1u);  // the drain at the end may probe for the last frame
}

}  // namespace
}  // namespace bsp::recovery
