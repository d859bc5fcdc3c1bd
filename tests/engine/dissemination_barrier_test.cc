// tests/engine/dissemination_barrier_test.cc: the sparse protocol's barrier
// (bsplib/dissemination_barrier.h) with p processes simulated in one: messages are
// delivered in a random order, and processes enter at random times.
//
// Checked, for radixes 2 to 5 and 8: nobody completes before everyone has entered;
// everyone completes after Σ_r fan(r) messages each (⌈log₂ p⌉ at radix 2, at most
// (k − 1)⌈log_k p⌉ at radix k), no process messaged twice in a round; differing collective calls are found by every
// process, with two witnesses that really differ; registration changes reach everyone, all p of them; damaged or
// misdirected messages are refused with a reason, never taken.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "bsplib/dissemination_barrier.h"

namespace {

using bsp::CollectiveCalls;
using bsp::DisseminationBarrier;
using bsp::RegistrationChanges;

struct InFlight {
  int from, to;
  std::vector<std::byte> body;
};

struct Simulation {
  std::vector<DisseminationBarrier> barriers;
  std::vector<InFlight> in_flight;
  std::vector<int> sent;
  std::mt19937 random{7};

  Simulation(int p, std::uint32_t superstep, const std::vector<CollectiveCalls>& calls, int radix = 2) {
    for (int pid = 0; pid < p; ++pid) barriers.emplace_back(pid, p, radix);
    sent.assign(static_cast<std::size_t>(p), 0);
    for (int pid = 0; pid < p; ++pid) {
      RegistrationChanges changes;
      for (std::uint32_t k = 0; k < calls[pid].pushes; ++k) changes.pushes.push_back(100u * pid + k);
      for (std::uint32_t k = 0; k < calls[pid].pops; ++k) changes.pops.push_back({k, pid % 2 == 0});
      barriers[pid].start(superstep, calls[pid], changes);
    }
  }
  void post(int from, std::vector<DisseminationBarrier::Message>& out) {
    for (auto& message : out) {
      in_flight.push_back({from, message.to, std::move(message.body)});
      ++sent[static_cast<std::size_t>(from)];
    }
    out.clear();
  }
  void enter(int pid) {
    std::vector<DisseminationBarrier::Message> out;
    barriers[pid].enter(out);
    barriers[pid].advance(out);
    post(pid, out);
  }
  // Delivers one message chosen at random; false when none is in flight.
  bool deliver_one() {
    if (in_flight.empty()) return false;
    std::size_t pick = std::uniform_int_distribution<std::size_t>(0, in_flight.size() - 1)(random);
    InFlight message = std::move(in_flight[pick]);
    in_flight.erase(in_flight.begin() + static_cast<long>(pick));
    EXPECT_EQ(barriers[message.to].receive(message.from, message.body), "");
    std::vector<DisseminationBarrier::Message> out;
    barriers[message.to].advance(out);
    post(message.to, out);
    return true;
  }
};

int ceil_log(int radix, int p) {
  int rounds = 0;
  for (long span = 1; span < p; span *= radix) ++rounds;
  return rounds;
}

const int kRadixes[] = {2, 3, 4, 5, 8};

TEST(DisseminationBarrier, RoundsAndPartnersOfEachRadix) {
  for (int radix : kRadixes) {
    for (int p = 1; p <= 70; ++p) {
      int messages = 0;
      DisseminationBarrier first(0, p, radix);
      EXPECT_EQ(first.rounds(), ceil_log(radix, p)) << "radix " << radix << " p=" << p;
      for (int round = 0; round < first.rounds(); ++round) {
        EXPECT_GE(first.fan(round), 1);
        EXPECT_LE(first.fan(round), radix - 1);
        messages += first.fan(round);
        for (int pid = 0; pid < p; ++pid) {
          DisseminationBarrier b(pid, p, radix);
          std::vector<int> partners;
          for (int j = 1; j <= b.fan(round); ++j) {
            EXPECT_NE(b.to(round, j), pid);
            // whom pid sends to hears from pid in the same round
            DisseminationBarrier peer(b.to(round, j), p, radix);
            bool hears = false;
            for (int k = 1; k <= peer.fan(round); ++k) hears |= peer.from(round, k) == pid;
            EXPECT_TRUE(hears) << "radix " << radix << " p=" << p << " round " << round;
            partners.push_back(b.to(round, j));
          }
          std::sort(partners.begin(), partners.end());
          EXPECT_EQ(std::unique(partners.begin(), partners.end()), partners.end());
        }
      }
      if (radix == 2) {
        EXPECT_EQ(messages, ceil_log(2, p));
      }
      EXPECT_LE(messages, (radix - 1) * ceil_log(radix, p));
    }
  }
}

TEST(DisseminationBarrier, NobodyCompletesBeforeEveryoneEntered) {
  for (int radix : kRadixes) {
    for (int p = 1; p <= 37; ++p) {
      std::vector<CollectiveCalls> calls(static_cast<std::size_t>(p));
      Simulation sim(p, 5, calls, radix);
      int messages = 0;
      for (int round = 0; round < sim.barriers[0].rounds(); ++round) messages += sim.barriers[0].fan(round);
      std::vector<int> order(static_cast<std::size_t>(p));
      for (int i = 0; i < p; ++i) order[i] = i;
      std::shuffle(order.begin(), order.end(), sim.random);
      // All but the last enter; everything deliverable is delivered: nobody completes.
      for (int i = 0; i + 1 < p; ++i) {
        sim.enter(order[i]);
        while (sim.deliver_one()) {
        }
      }
      for (int pid = 0; pid < p; ++pid) {
        if (p > 1) {
          EXPECT_FALSE(sim.barriers[pid].complete()) << "radix " << radix << " p=" << p << " pid " << pid;
        }
      }
      sim.enter(order[p - 1]);
      while (sim.deliver_one()) {
      }
      for (int pid = 0; pid < p; ++pid) {
        EXPECT_TRUE(sim.barriers[pid].complete()) << "radix " << radix << " p=" << p << " pid " << pid;
        EXPECT_EQ(sim.sent[pid], messages) << "radix " << radix << " p=" << p;
        EXPECT_FALSE(sim.barriers[pid].conflict().has_value());
        EXPECT_EQ(sim.barriers[pid].awaited(), -1);
      }
    }
  }
}

TEST(DisseminationBarrier, EveryoneFindsDifferingCalls) {
  for (int radix : kRadixes) {
    for (int p : {2, 3, 5, 8, 13, 16, 33}) {
      for (int odd : {0, p / 2, p - 1}) {
        std::vector<CollectiveCalls> calls(static_cast<std::size_t>(p));
        calls[odd].final = 1;  // one process in bsp_end
        Simulation sim(p, 0, calls, radix);
        for (int pid = 0; pid < p; ++pid) sim.enter(pid);
        while (sim.deliver_one()) {
        }
        for (int pid = 0; pid < p; ++pid) {
          ASSERT_TRUE(sim.barriers[pid].complete());
          const auto& conflict = sim.barriers[pid].conflict();
          ASSERT_TRUE(conflict.has_value()) << "p=" << p << " pid " << pid << " did not see pid " << odd;
          EXPECT_NE(conflict->a, conflict->b);
          EXPECT_EQ(conflict->a, calls[conflict->pid_a]);  // the witnesses are true
          EXPECT_EQ(conflict->b, calls[conflict->pid_b]);
          std::string text = bsp::describe_conflict(0, *conflict);
          EXPECT_NE(text.find("pid " + std::to_string(odd) + " called bsp_end"), std::string::npos) << text;
        }
      }
    }
  }
}

TEST(DisseminationBarrier, RegistrationChangesReachEveryone) {
  for (int radix : kRadixes) {
    for (int p : {1, 2, 3, 6, 16, 21}) {
      std::vector<CollectiveCalls> calls(static_cast<std::size_t>(p), CollectiveCalls{0, 0, 2, 1});
      Simulation sim(p, 3, calls, radix);
      for (int pid = p - 1; pid >= 0; --pid) sim.enter(pid);
      while (sim.deliver_one()) {
      }
      for (int pid = 0; pid < p; ++pid) {
        ASSERT_TRUE(sim.barriers[pid].complete());
        std::vector<RegistrationChanges> all = sim.barriers[pid].take_changes();
        ASSERT_EQ(all.size(), static_cast<std::size_t>(p)) << "p=" << p << " pid " << pid;
        for (int q = 0; q < p; ++q) {
          EXPECT_EQ(all[q].pid, q);
          EXPECT_EQ(all[q].pushes, (std::vector<std::uint64_t>{100u * q, 100u * q + 1}));
          ASSERT_EQ(all[q].pops.size(), 1u);
          EXPECT_EQ(all[q].pops[0].ambiguous, q % 2 == 0);
        }
      }
    }
  }
}

TEST(DisseminationBarrier, RefusesDamagedAndMisdirectedMessages) {
  const int p = 8;
  std::vector<CollectiveCalls> calls(p, CollectiveCalls{0, 0, 1, 0});
  Simulation sim(p, 9, calls);
  sim.enter(0);  // round 0: pid 0 → pid 1
  ASSERT_EQ(sim.in_flight.size(), 1u);
  const std::vector<std::byte> good = sim.in_flight[0].body;
  DisseminationBarrier& one = sim.barriers[1];
  // Every truncation is refused.
  for (std::size_t cut = 0; cut < good.size(); ++cut) {
    EXPECT_NE(one.receive(0, {good.data(), cut}), "") << "cut at " << cut;
  }
  // Trailing bytes.
  std::vector<std::byte> longer = good;
  longer.push_back(std::byte{0});
  EXPECT_NE(one.receive(0, longer), "");
  // From a process that does not send round 0 to pid 1.
  EXPECT_NE(one.receive(2, good), "");
  // Another superstep.
  std::vector<std::byte> other = good;
  other[0] = std::byte{10};
  EXPECT_NE(one.receive(0, other), "");
  // A round number beyond the rounds.
  std::vector<std::byte> round = good;
  round[4] = std::byte{200};
  EXPECT_NE(one.receive(0, round), "");
  // A huge count of changes (the u32 right after the fixed part).
  std::vector<std::byte> huge = good;
  std::size_t count_at = 4 + 1 + 13 + 1 + 4 + 13 + 4 + 13;
  huge[count_at + 3] = std::byte{0x7f};
  EXPECT_NE(one.receive(0, huge), "");
  // A change naming a pid outside the job.
  std::vector<std::byte> stranger = good;
  stranger[count_at + 4 + 3] = std::byte{0x40};
  EXPECT_NE(one.receive(0, stranger), "");
  // The good one is taken once, refused twice.
  EXPECT_EQ(one.receive(0, good), "");
  EXPECT_NE(one.receive(0, good), "");
}

TEST(DisseminationBarrier, RadixFourRefusesWhoDoesNotSendThere) {
  const int p = 16;
  std::vector<CollectiveCalls> calls(p);
  Simulation sim(p, 2, calls, 4);
  sim.enter(5);  // round 0: pid 5 → 6, 7, 8
  ASSERT_EQ(sim.in_flight.size(), 3u);
  const std::vector<std::byte> good = sim.in_flight[0].body;
  DisseminationBarrier& eight = sim.barriers[8];
  EXPECT_NE(eight.receive(4, good), "");  // distance 4: a round-1 partner, not round 0's
  EXPECT_NE(eight.receive(9, good), "");  // behind, not ahead
  EXPECT_EQ(eight.receive(5, good), "");  // distance 3: j = 3
  EXPECT_NE(eight.receive(5, good), "");  // twice
  std::vector<DisseminationBarrier::Message> out;
  eight.enter(out);  // round 0 goes to 9, 10, 11; 7 and 6 are still missing
  EXPECT_EQ(out.size(), 3u);
  out.clear();
  eight.advance(out);
  EXPECT_TRUE(out.empty());
  EXPECT_FALSE(eight.complete());
  EXPECT_EQ(eight.awaited(), 7);
}

}  // namespace
