// tests/recovery/protocol_harness.cc: the driving loop of the deterministic protocol tests.
#include "tests/recovery/protocol_harness.h"

#include <algorithm>
#include <memory>
#include <random>

#include "recovery/protocol_core.h"

namespace bsp::recovery::testing {
namespace {

constexpr std::size_t kMaxPayload = 1400;
constexpr int kMaxSteps = 400000;
constexpr Duration kGiveUpAfter = std::chrono::seconds(30);  // manual clock

class Recorder final : public PayloadSink {
 public:
  explicit Recorder(int nprocs) : got(static_cast<std::size_t>(nprocs)) {}
  void on_payload(int peer, std::span<const std::byte> payload) override {
    got[static_cast<std::size_t>(peer)].emplace_back(payload.begin(), payload.end());
  }
  void on_peer_lost(int, std::string_view) override { lost = true; }
  std::vector<std::vector<std::vector<std::byte>>> got;
  bool lost = false;
};

}  // namespace

std::vector<std::byte> test_payload(int src, int dst, std::size_t i, std::size_t max) {
  std::mt19937 generator(static_cast<unsigned>(src * 1000003 + dst * 7919 + static_cast<int>(i)));
  std::size_t size = 1 + generator() % max;
  std::vector<std::byte> bytes(size);
  for (std::byte& b : bytes) b = static_cast<std::byte>(generator());
  return bytes;
}

std::string describe(const ChannelStats& s) {
  return "data_sent=" + std::to_string(s.data_sent) + " received=" + std::to_string(s.data_received) +
         " acks=" + std::to_string(s.explicit_acks_sent) + " acks_rx=" + std::to_string(s.acks_received) +
         " ack_requests=" + std::to_string(s.ack_requests_sent) + " nacks=" + std::to_string(s.nacks_sent) +
         " nacks_rx=" + std::to_string(s.nacks_received) + " resent=" + std::to_string(s.retransmissions) +
         " gaps=" + std::to_string(s.gaps_detected) + " probes=" + std::to_string(s.probes_sent) +
         " dups=" + std::to_string(s.duplicates_received) + " corrupt=" + std::to_string(s.corrupt_dropped) +
         " malformed=" + std::to_string(s.malformed_dropped) + " foreign=" + std::to_string(s.foreign_dropped) +
         " waits=" + std::to_string(s.send_buffer_waits) + " overflow=" + std::to_string(s.overflow_dropped);
}

Outcome run_protocol(const Traffic& traffic, FaultRule rule) {
  const int n = traffic.nprocs;
  ManualClock clock;
  const Time start = clock.now();
  MemoryNetwork network(n, clock, traffic.latency, traffic.delay, traffic.per_frame);
  network.set_rule(std::move(rule));
  std::vector<std::unique_ptr<ProtocolCore>> cores;
  std::vector<Recorder> recorders;
  for (int pid = 0; pid < n; ++pid) {
    CoreConfig config{pid, n, 77, traffic.buffers, 1472, traffic.policy};
    cores.push_back(std::make_unique<ProtocolCore>(config, clock, network.output(pid)));
    recorders.emplace_back(n);
  }
  auto planned = [&](int src, int dst) -> std::size_t {
    if (src == dst) return 0;
    if (traffic.all_to_all || (src == 0 && dst == 1)) return traffic.frames;
    return 0;
  };
  std::vector<std::vector<std::size_t>> next(static_cast<std::size_t>(n),
                                             std::vector<std::size_t>(static_cast<std::size_t>(n), 0));
  std::size_t max_payload = std::min(kMaxPayload, cores[0]->max_payload());

  Outcome outcome;
  for (int step = 0; step < kMaxSteps && clock.now() - start < kGiveUpAfter; ++step) {
    bool all_done = network.idle();
    for (int p = 0; p < n; ++p) {
      ProtocolCore& core = *cores[static_cast<std::size_t>(p)];
      Recorder& recorder = recorders[static_cast<std::size_t>(p)];
      for (int q = 0; q < n; ++q) {
        std::size_t& i = next[static_cast<std::size_t>(p)][static_cast<std::size_t>(q)];
        while (i < planned(p, q)) {
          if (core.send(q, test_payload(p, q, i, max_payload)) != SendResult::ok) break;
          ++i;
        }
        if (i < planned(p, q)) all_done = false;
      }
      network.deliver(p, core, recorder);
      std::vector<int> awaited;
      for (int q = 0; q < n; ++q) {
        if (recorder.got[static_cast<std::size_t>(q)].size() < planned(q, p)) awaited.push_back(q);
      }
      if (!awaited.empty()) all_done = false;
      core.service_waiting(awaited);
      if (!core.all_acknowledged()) all_done = false;
    }
    if (all_done && network.idle()) {
      outcome.finished = true;
      break;
    }
    Time due = network.next_arrival();
    for (const auto& core : cores) due = std::min(due, core->next_deadline());
    Duration step_by = std::chrono::microseconds(1);
    if (due != Time::max() && due > clock.now()) step_by = std::max(step_by, due - clock.now());
    clock.advance(step_by);
  }
  outcome.elapsed = clock.now() - start;
  if (!outcome.finished) {
    for (int p = 0; p < n; ++p) {
      const ProtocolCore& core = *cores[static_cast<std::size_t>(p)];
      Time due = core.next_deadline();
      outcome.stuck += "pid " + std::to_string(p) + ": acknowledged=" + std::to_string(core.all_acknowledged()) +
                       " output_pending=" + std::to_string(core.output_pending()) + " next_timer_us=" +
                       (due == Time::max()
                            ? std::string("none")
                            : std::to_string(
                                  std::chrono::duration_cast<std::chrono::microseconds>(due - clock.now()).count())) +
                       " free=" + std::to_string(core.free_buffers()) + "\n";
    }
  }
  for (int p = 0; p < n; ++p) {
    for (int q = 0; q < n; ++q) {
      const auto& got = recorders[static_cast<std::size_t>(q)].got[static_cast<std::size_t>(p)];
      if (got.size() != planned(p, q) && outcome.delivered_exactly) {
        outcome.delivered_exactly = false;
        outcome.mismatch = "link " + std::to_string(p) + "->" + std::to_string(q) + ": " + std::to_string(got.size()) +
                           " of " + std::to_string(planned(p, q)) + " delivered";
      }
      for (std::size_t i = 0; i < std::min(got.size(), planned(p, q)) && outcome.delivered_exactly; ++i) {
        if (got[i] != test_payload(p, q, i, max_payload)) {
          outcome.delivered_exactly = false;
          outcome.mismatch = "link " + std::to_string(p) + "->" + std::to_string(q) + ": payload " + std::to_string(i) +
                             " differs";
        }
      }
    }
    if (recorders[static_cast<std::size_t>(p)].lost) {
      outcome.delivered_exactly = false;
      outcome.mismatch = "peer lost reported";
    }
    outcome.stats.push_back(cores[static_cast<std::size_t>(p)]->stats());
    outcome.total += cores[static_cast<std::size_t>(p)]->stats();
  }
  outcome.dropped = network.dropped();
  outcome.duplicated = network.duplicated();
  outcome.corrupted = network.corrupted();
  outcome.corrupted_check_field = network.corrupted_check_field();
  outcome.delayed = network.delayed();
  return outcome;
}

}  // namespace bsp::recovery::testing
