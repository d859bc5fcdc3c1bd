// tests/recovery/protocol_loss_test.cc: every loss pattern against every ack policy, over
// the in-memory network with a manual clock (no sockets, no sleeps): first, last, burst,
// every other, ack loss, NACK loss, probe loss, reorder, duplicate, corrupt, random mixes,
// and a pool too small for the traffic. Each run must deliver every payload exactly once
// in order, and its counters must say what happened.
#include <gtest/gtest.h>

#include <iostream>
#include <random>

#include "tests/recovery/protocol_harness.h"

namespace bsp::recovery::testing {
namespace {

using namespace std::chrono_literals;
using wire::FrameType;

// Tail and burst recovery must not wait on anything like TCP's 200 ms / 1.5 s timers.
constexpr Duration kQuickRecovery = 60ms;

class LossPatternTest : public ::testing::TestWithParam<std::string> {
 protected:
  Traffic traffic() const {
    Traffic t;
    t.policy = GetParam();
    return t;
  }
  static void expect_delivered(const Outcome& outcome) {
    EXPECT_TRUE(outcome.finished) << "did not finish (delivered and acknowledged) in "
                                  << std::chrono::duration<double>(outcome.elapsed).count() << " s\n"
                                  << outcome.stuck;
    if (::testing::Test::HasFailure()) {
      for (const ChannelStats& stats : outcome.stats) std::cerr << "  " << describe(stats) << "\n";
      std::cerr << "  network: dropped=" << outcome.dropped << " duplicated=" << outcome.duplicated
                << " corrupted=" << outcome.corrupted << " delayed=" << outcome.delayed << "\n";
    }
    EXPECT_TRUE(outcome.delivered_exactly) << outcome.mismatch;
  }
};

bool is_data(const FrameEvent& e) { return e.type == FrameType::data; }

TEST_P(LossPatternTest, NoLossMeansNoRecovery) {
  Outcome outcome = run_protocol(traffic(), nullptr);
  expect_delivered(outcome);
  EXPECT_EQ(outcome.total.data_sent, 200u);
  EXPECT_EQ(outcome.total.data_received, 200u);
  EXPECT_EQ(outcome.total.retransmissions, 0u);
  EXPECT_EQ(outcome.total.nacks_sent, 0u);
  EXPECT_EQ(outcome.total.duplicates_received, 0u);
  EXPECT_EQ(outcome.total.gaps_detected, 0u);
}

TEST_P(LossPatternTest, FirstFrameLost) {
  Outcome outcome = run_protocol(
      traffic(), [](const FrameEvent& e) { return is_data(e) && e.index == 0 ? Fate::drop : Fate::deliver; });
  expect_delivered(outcome);
  EXPECT_EQ(outcome.dropped, 1u);
  EXPECT_EQ(outcome.stats[1].gaps_detected, 1u);
  EXPECT_GE(outcome.stats[1].nacks_sent, 1u);
  EXPECT_EQ(outcome.stats[0].retransmissions, 1u);
  EXPECT_LT(outcome.elapsed, kQuickRecovery);
}

TEST_P(LossPatternTest, LastFrameLostIsFoundByProbe) {
  Outcome outcome = run_protocol(
      traffic(), [](const FrameEvent& e) { return is_data(e) && e.index == 199 ? Fate::drop : Fate::deliver; });
  expect_delivered(outcome);
  EXPECT_EQ(outcome.dropped, 1u);
  EXPECT_GE(outcome.total.probes_sent, 1u);
  EXPECT_EQ(outcome.stats[0].retransmissions, 1u);
  EXPECT_LT(outcome.elapsed, kQuickRecovery);
}

TEST_P(LossPatternTest, LastThreeFramesAndFirstProbesLost) {
  Outcome outcome = run_protocol(traffic(), [](const FrameEvent& e) {
    if (is_data(e) && e.index >= 197 && e.index < 200) return Fate::drop;
    if (e.type == FrameType::probe && e.index < 2) return Fate::drop;
    return Fate::deliver;
  });
  expect_delivered(outcome);
  EXPECT_GE(outcome.total.probes_sent, 3u);
  EXPECT_EQ(outcome.stats[0].retransmissions, 3u);
  EXPECT_LT(outcome.elapsed, kQuickRecovery);
}

TEST_P(LossPatternTest, BurstLost) {
  Outcome outcome = run_protocol(traffic(), [](const FrameEvent& e) {
    return is_data(e) && e.index >= 20 && e.index < 60 ? Fate::drop : Fate::deliver;
  });
  expect_delivered(outcome);
  EXPECT_EQ(outcome.stats[1].gaps_detected, 40u);
  EXPECT_EQ(outcome.stats[0].retransmissions, 40u);  // exactly the missing ones: selective
  EXPECT_LT(outcome.elapsed, kQuickRecovery);
}

TEST_P(LossPatternTest, EveryOtherFrameLost) {
  Outcome outcome = run_protocol(
      traffic(), [](const FrameEvent& e) { return is_data(e) && e.index % 2 == 1 ? Fate::drop : Fate::deliver; });
  expect_delivered(outcome);
  EXPECT_GE(outcome.stats[0].retransmissions, 100u);
  EXPECT_GE(outcome.stats[1].gaps_detected, 99u);
}

TEST_P(LossPatternTest, AcksLost) {
  Outcome outcome = run_protocol(traffic(), [](const FrameEvent& e) {
    return (e.type == FrameType::ack || e.type == FrameType::nack) && e.index < 40 ? Fate::drop : Fate::deliver;
  });
  expect_delivered(outcome);
  EXPECT_EQ(outcome.stats[0].retransmissions, 0u + outcome.stats[1].duplicates_received);
}

TEST_P(LossPatternTest, NacksLost) {
  int nacks_dropped = 0;
  Outcome outcome = run_protocol(traffic(), [&nacks_dropped](const FrameEvent& e) {
    if (is_data(e) && (e.index == 5 || e.index == 6 || e.index == 120)) return Fate::drop;
    if (e.type == FrameType::nack && e.index < 2) {
      ++nacks_dropped;
      return Fate::drop;
    }
    return Fate::deliver;
  });
  expect_delivered(outcome);
  EXPECT_EQ(nacks_dropped, 2);
  EXPECT_GE(outcome.stats[0].retransmissions, 3u);
  EXPECT_LT(outcome.elapsed, kQuickRecovery);
}

TEST_P(LossPatternTest, Reordered) {
  Outcome outcome = run_protocol(
      traffic(), [](const FrameEvent& e) { return is_data(e) && e.index % 7 == 3 ? Fate::delay : Fate::deliver; });
  expect_delivered(outcome);
  EXPECT_GT(outcome.delayed, 20u);
  EXPECT_GT(outcome.stats[1].gaps_detected, 0u);
}

TEST_P(LossPatternTest, Duplicated) {
  Outcome outcome = run_protocol(
      traffic(), [](const FrameEvent& e) { return e.index % 5 == 2 ? Fate::duplicate : Fate::deliver; });
  expect_delivered(outcome);
  EXPECT_GE(outcome.stats[1].duplicates_received, 40u);
  EXPECT_EQ(outcome.total.data_received, 200u);
}

TEST_P(LossPatternTest, Corrupted) {
  Outcome outcome = run_protocol(traffic(),
                                 [](const FrameEvent& e) { return e.index % 6 == 4 ? Fate::corrupt : Fate::deliver; });
  expect_delivered(outcome);
  // A flipped bit in the length field makes a frame malformed rather than corrupt; one in
  // the check field would be taken, since the MAC that covers everything else holds and
  // the check is not computed (the network flips the middle byte, never bytes 2-3).
  EXPECT_EQ(outcome.total.corrupt_dropped + outcome.total.malformed_dropped,
            outcome.corrupted - outcome.corrupted_check_field);
  EXPECT_GT(outcome.corrupted, 30u);
  EXPECT_GT(outcome.stats[0].retransmissions, 30u);
}

TEST_P(LossPatternTest, RandomMixAllToAll) {
  Traffic t = traffic();
  t.nprocs = 4;
  t.all_to_all = true;
  t.frames = 300;
  std::mt19937 generator(7);
  Outcome outcome = run_protocol(t, [&generator](const FrameEvent&) {
    double x = std::uniform_real_distribution<double>(0, 1)(generator);
    if (x < 0.10) return Fate::drop;
    if (x < 0.12) return Fate::duplicate;
    if (x < 0.15) return Fate::delay;
    if (x < 0.16) return Fate::corrupt;
    return Fate::deliver;
  });
  expect_delivered(outcome);
  EXPECT_EQ(outcome.total.data_sent, 12u * 300u);
  // Everyone bursts 900 frames at once into a shared pool of 1024: frames that find no
  // buffer after a loss are refused and resent too, but boundedly.
  double resent = static_cast<double>(outcome.total.retransmissions) / 3600.0;
  EXPECT_GT(resent, 0.08);
  EXPECT_LT(resent, 1.0) << describe(outcome.total);
}

TEST_P(LossPatternTest, RandomLossOneWayCostsAboutTheLossRate) {
  Traffic t = traffic();
  t.frames = 2000;
  std::mt19937 generator(5);
  Outcome outcome = run_protocol(t, [&generator](const FrameEvent&) {
    return std::uniform_real_distribution<double>(0, 1)(generator) < 0.10 ? Fate::drop : Fate::deliver;
  });
  expect_delivered(outcome);
  double resent = static_cast<double>(outcome.total.retransmissions) / 2000.0;
  EXPECT_GT(resent, 0.08) << describe(outcome.total);
  EXPECT_LT(resent, 0.20) << describe(outcome.total);
}

TEST_P(LossPatternTest, HeavyLossAllToAll) {
  Traffic t = traffic();
  t.nprocs = 3;
  t.all_to_all = true;
  t.frames = 200;
  std::mt19937 generator(11);
  Outcome outcome = run_protocol(t, [&generator](const FrameEvent&) {
    return std::uniform_real_distribution<double>(0, 1)(generator) < 0.3 ? Fate::drop : Fate::deliver;
  });
  expect_delivered(outcome);
  EXPECT_GT(outcome.total.retransmissions, 300u);
}

TEST_P(LossPatternTest, PoolSmallerThanTraffic) {
  Traffic t = traffic();
  t.nprocs = 4;
  t.all_to_all = true;
  t.frames = 150;
  t.buffers = 24;
  std::mt19937 generator(3);
  Outcome outcome = run_protocol(t, [&generator](const FrameEvent&) {
    return std::uniform_real_distribution<double>(0, 1)(generator) < 0.05 ? Fate::drop : Fate::deliver;
  });
  expect_delivered(outcome);
  EXPECT_GT(outcome.total.send_buffer_waits, 0u);
}

INSTANTIATE_TEST_SUITE_P(Policies, LossPatternTest, ::testing::Values("buffer", "every", "pupa"),
                         [](const auto& info) { return info.param; });

// The policies differ in how many explicit acks they send for the same traffic.
TEST(AckPolicyTest, ExplicitAckCountsDiffer) {
  Traffic t;
  t.nprocs = 3;
  t.all_to_all = true;
  t.frames = 400;
  t.buffers = 256;
  std::map<std::string, ChannelStats> totals;
  for (std::string policy : {"buffer", "every", "pupa"}) {
    t.policy = policy;
    Outcome outcome = run_protocol(t, nullptr);
    ASSERT_TRUE(outcome.finished && outcome.delivered_exactly) << policy << ": " << outcome.mismatch;
    totals[policy] = outcome.total;
  }
  EXPECT_GE(totals["every"].explicit_acks_sent, 6u * 400u);
  EXPECT_LT(totals["buffer"].explicit_acks_sent * 10, totals["every"].explicit_acks_sent);
  EXPECT_LT(totals["pupa"].explicit_acks_sent, totals["every"].explicit_acks_sent);
  EXPECT_EQ(totals["every"].ack_requests_sent, 0u);
  EXPECT_GT(totals["pupa"].ack_requests_sent, 0u);
}

TEST(AckPolicyTest, UnknownPolicyIsRefused) {
  ManualClock clock;
  MemoryNetwork network(2, clock, 1us, 1us);
  EXPECT_THROW(ProtocolCore(CoreConfig{0, 2, 1, 0, 1472, "sometimes"}, clock, network.output(0)), std::runtime_error);
}

}  // namespace
}  // namespace bsp::recovery::testing

namespace bsp::recovery::testing {
namespace {

class CountingSink final : public PayloadSink {
 public:
  void on_payload(int, std::span<const std::byte>) override { ++payloads; }
  void on_peer_lost(int, std::string_view) override {}
  std::size_t payloads = 0;
};

// Ping-pong driven by progress-style calls only (service(), no waiting): a lost ping or
// pong must be recovered by the quiet-link probe of its sender.
TEST(PingPongTest, LostPingsAndPongsAreRecoveredWithoutWaiting) {
  for (std::string policy : {"buffer", "every", "pupa"}) {
    ManualClock clock;
    MemoryNetwork network(2, clock, std::chrono::microseconds(5), std::chrono::microseconds(5));
    std::mt19937 generator(21);
    network.set_rule([&generator](const FrameEvent&) {
      return std::uniform_real_distribution<double>(0, 1)(generator) < 0.1 ? Fate::drop : Fate::deliver;
    });
    ProtocolCore ping(CoreConfig{0, 2, 5, 0, 1472, policy}, clock, network.output(0));
    ProtocolCore pong(CoreConfig{1, 2, 5, 0, 1472, policy}, clock, network.output(1));
    CountingSink at_ping, at_pong;
    std::vector<std::byte> message(4, std::byte{9});
    constexpr std::size_t kRounds = 300;
    std::size_t rounds = 0;
    ASSERT_EQ(ping.send(1, message), SendResult::ok);
    for (int step = 0; step < 200000 && rounds < kRounds; ++step) {
      ping.service();
      pong.service();
      std::size_t before = at_pong.payloads;
      network.deliver(1, pong, at_pong);
      if (at_pong.payloads > before) {
        ASSERT_EQ(pong.send(0, message), SendResult::ok);
      }
      before = at_ping.payloads;
      network.deliver(0, ping, at_ping);
      if (at_ping.payloads > before && ++rounds < kRounds) {
        ASSERT_EQ(ping.send(1, message), SendResult::ok);
      }
      clock.advance(std::chrono::microseconds(2));
    }
    EXPECT_EQ(rounds, kRounds) << policy << ": stuck after " << rounds << " rounds; ping " << describe(ping.stats())
                               << "; pong " << describe(pong.stats());
  }
}

}  // namespace
}  // namespace bsp::recovery::testing
