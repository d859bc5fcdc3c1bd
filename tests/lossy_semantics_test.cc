// tests/lossy_semantics_test.cc: the semantics cases of tests/bsp_cases.cc again over the
// unreliable transports (udp, nic), with the fault decorator dropping 1%, 10% and 30% of
// the frames sent and duplicating, reordering and corrupting some, under every ack
// policy. Each case checks every byte it receives, so passing means the data arrived
// bit-identical; the deadline means nothing hangs; the packet counters of `bsprun
// --stats` must add up: no retransmissions without loss, retransmissions close to the
// loss rate times the packets sent with it.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "tests/run_program.h"

namespace {

using bsp::testing::describe;
using bsp::testing::ProgramResult;
using bsp::testing::run_program;
using bsp::testing::stats_total;
using namespace std::chrono_literals;

const std::string kBsprun = "bsplib/bsprun";
const std::string kCases = "tests/bsp_cases";

struct Loss {
  const char* name;
  double drop;
  double corrupt;  // a corrupt frame is dropped by the receiver: loss too
  std::string spec() const {
    return "drop=" + std::to_string(drop) + ",dup=0.02,reorder=0.03,corrupt=" + std::to_string(corrupt) + ",seed=11";
  }
};

const Loss kLosses[] = {{"drop1", 0.01, 0.001}, {"drop10", 0.10, 0.001}, {"drop30", 0.30, 0.001}};

ProgramResult run_lossy(const std::string& transport, const std::string& policy, const std::string& fault, int procs,
                        const std::vector<std::string>& case_args, const std::string& sync = "auto") {
  std::vector<std::string> argv = {
      kBsprun,          "-n",     std::to_string(procs), "--transport=" + transport, "--ack-policy=" + policy,
      "--sync=" + sync, "--stats"};
  if (!fault.empty()) argv.push_back("--fault=" + fault);
  argv.push_back(kCases);
  argv.insert(argv.end(), case_args.begin(), case_args.end());
  return run_program(argv, 180s);
}

bool usable(const std::string& transport) { return bsp::testing::transport_usable(kBsprun, transport); }
#define SKIP_UNLESS_USABLE(transport) \
  if (!usable(transport)) GTEST_SKIP() << "transport " << (transport) << " is not built in or needs root"

// ---- every semantics case, p = 4, every loss rate and ack policy ----
using LossyCase = std::tuple<std::string, Loss, std::string, std::string>;  // transport, loss, policy, case

class LossySemanticsTest : public ::testing::TestWithParam<LossyCase> {};

TEST_P(LossySemanticsTest, Holds) {
  const auto& [transport, loss, policy, name] = GetParam();
  SKIP_UNLESS_USABLE(transport);
  ProgramResult result = run_lossy(transport, policy, loss.spec(), 4, {"--case=" + name});
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_NE(result.out.find("case " + name + " passed"), std::string::npos) << describe(result);
}

const std::vector<std::string> kCasesUnderLoss = {"put_all_to_all",    "get_before_put",   "overlapping_puts",
                                                  "put_copies_source", "hp_variants",      "registration_order_and_pop",
                                                  "tagsize_states",    "bsmp_all_to_all",  "many_supersteps",
                                                  "empty_supersteps",  "large_transfers",  "many_small_puts",
                                                  "zero_length",       "enquiry",          "many_to_one",
                                                  "large_gathered",    "large_put_hazards"};

std::string loss_param_name(const std::string& transport, const Loss& loss, const std::string& policy) {
  return transport + "_" + loss.name + "_" + policy;
}

INSTANTIATE_TEST_SUITE_P(Faults, LossySemanticsTest,
                         ::testing::Combine(::testing::Values("udp", "nic"), ::testing::ValuesIn(kLosses),
                                            ::testing::Values("buffer", "every", "pupa"),
                                            ::testing::ValuesIn(kCasesUnderLoss)),
                         [](const ::testing::TestParamInfo<LossyCase>& info) {
                           return loss_param_name(std::get<0>(info.param), std::get<1>(info.param),
                                                  std::get<2>(info.param)) +
                                  "_" + std::get<3>(info.param);
                         });

// ---- the same cases with the sparse superstep protocol (its acks, barrier messages and
// registration changes lost, duplicated and reordered too), p = 4 and 8, buffer policy ----
using LossySparseCase = std::tuple<std::string, Loss, int, std::string>;  // transport, loss, procs, case

class LossySparseTest : public ::testing::TestWithParam<LossySparseCase> {};

TEST_P(LossySparseTest, Holds) {
  const auto& [transport, loss, procs, name] = GetParam();
  SKIP_UNLESS_USABLE(transport);
  ProgramResult result = run_lossy(transport, "buffer", loss.spec(), procs, {"--case=" + name}, "sparse");
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_NE(result.out.find("case " + name + " passed"), std::string::npos) << describe(result);
}

INSTANTIATE_TEST_SUITE_P(
    SparseSync, LossySparseTest,
    ::testing::Combine(::testing::Values("udp", "nic"), ::testing::ValuesIn(kLosses), ::testing::Values(4, 8),
                       ::testing::Values("put_all_to_all", "get_before_put", "registration_order_and_pop",
                                         "tagsize_states", "bsmp_all_to_all", "many_supersteps", "empty_supersteps",
                                         "large_transfers", "racing_puts_and_gets", "hp_variants")),
    [](const ::testing::TestParamInfo<LossySparseCase>& info) {
      return std::get<0>(info.param) + "_" + std::get<1>(info.param).name + "_p" +
             std::to_string(std::get<2>(info.param)) + "_" + std::get<3>(info.param);
    });

// ---- many-to-one and all-to-all on p = 2, 4, 8: data intact, counters add up ----
using Pattern = std::tuple<std::string, std::string, int>;  // transport, policy, procs

class LossyPatternTest : public ::testing::TestWithParam<Pattern> {};

TEST_P(LossyPatternTest, ManyToOneRetransmitsAboutWhatWasLost) {
  const auto& [transport, policy, procs] = GetParam();
  SKIP_UNLESS_USABLE(transport);
  const Loss& loss = kLosses[1];  // 10%
  ProgramResult result = run_lossy(transport, policy, loss.spec(), procs, {"--case=many_to_one", "--mb=4"});
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  ASSERT_NE(result.out.find("case many_to_one passed"), std::string::npos) << describe(result);
  double sent = stats_total(result, "data_sent");
  double resent = stats_total(result, "retransmissions");
  ASSERT_GT(sent, 0) << describe(result);
  // Each lost frame is resent at least once (and a resend may be lost in turn); a few
  // more go when a NACK or its answer is lost too. Far more would be go-back-n.
  double lost = loss.drop + loss.corrupt;
  EXPECT_GE(resent, 0.5 * lost * sent) << describe(result);
  EXPECT_LE(resent, 4.0 * lost * sent) << describe(result);
  EXPECT_GT(stats_total(result, "duplicates"), 0) << describe(result);  // dup=2%: seen and dropped
}

TEST_P(LossyPatternTest, AllToAllPutsAndMessages) {
  const auto& [transport, policy, procs] = GetParam();
  SKIP_UNLESS_USABLE(transport);
  for (const char* name : {"put_all_to_all", "bsmp_all_to_all", "large_transfers"}) {
    ProgramResult result = run_lossy(transport, policy, kLosses[1].spec(), procs, {std::string("--case=") + name});
    ASSERT_EQ(result.exit_code, 0) << name << ": " << describe(result);
    EXPECT_NE(result.out.find(std::string("case ") + name + " passed"), std::string::npos) << describe(result);
  }
}

TEST_P(LossyPatternTest, NoLossNoRetransmissions) {
  const auto& [transport, policy, procs] = GetParam();
  SKIP_UNLESS_USABLE(transport);
  for (const char* name : {"put_all_to_all", "bsmp_all_to_all", "large_transfers"}) {
    ProgramResult result = run_lossy(transport, policy, "", procs, {std::string("--case=") + name});
    ASSERT_EQ(result.exit_code, 0) << name << ": " << describe(result);
    EXPECT_GT(stats_total(result, "data_sent"), 0) << describe(result);
    EXPECT_EQ(stats_total(result, "retransmissions"), 0) << name << ": " << describe(result);
    EXPECT_EQ(stats_total(result, "duplicates"), 0) << name << ": " << describe(result);
    EXPECT_EQ(stats_total(result, "corrupt"), 0) << name << ": " << describe(result);
  }
}

INSTANTIATE_TEST_SUITE_P(Patterns, LossyPatternTest,
                         ::testing::Combine(::testing::Values("udp", "nic"),
                                            ::testing::Values("buffer", "every", "pupa"), ::testing::Values(2, 4, 8)),
                         [](const ::testing::TestParamInfo<Pattern>& info) {
                           return std::get<0>(info.param) + "_" + std::get<1>(info.param) + "_p" +
                                  std::to_string(std::get<2>(info.param));
                         });

// ---- 100 MB bursts on loopback with default settings: nothing lost, nothing resent ----
class HundredMegabyteBurstTest : public ::testing::TestWithParam<std::string> {};

TEST_P(HundredMegabyteBurstTest, ManyToOneAndAllToAllLoseNothing) {
  const std::string transport = GetParam();
  SKIP_UNLESS_USABLE(transport);
  // p = 4: three senders of 34 MB into one (102 MB); twelve pairs of 9 MB (108 MB).
  for (const auto& [name, megabytes] : {std::pair{"many_to_one", "34"}, std::pair{"all_to_all_bulk", "9"}}) {
    ProgramResult result = run_lossy(transport, "buffer", "", 4,
                                     {std::string("--case=") + name, std::string("--mb=") + megabytes});
    ASSERT_EQ(result.exit_code, 0) << name << ": " << describe(result);
    EXPECT_NE(result.out.find(std::string("case ") + name + " passed"), std::string::npos) << describe(result);
    EXPECT_GT(stats_total(result, "bytes_sent"), 100e6) << describe(result);
    EXPECT_EQ(stats_total(result, "retransmissions"), 0) << name << ": " << describe(result);
    EXPECT_EQ(stats_total(result, "overflow_refused"), 0) << name << ": " << describe(result);
  }
}

INSTANTIATE_TEST_SUITE_P(Loopback, HundredMegabyteBurstTest, ::testing::Values("udp", "nic"));

// ---- nic's other receive and send modes (TPACKET_V3 blocks, the transmit ring), with
// lo's 64 KiB frames, under 10% loss: data intact ----
class NicModeUnderLossTest : public ::testing::TestWithParam<std::pair<const char*, const char*>> {};

TEST_P(NicModeUnderLossTest, LargeTransfersAndManyToOneArriveIntact) {
  const auto& [rx, tx] = GetParam();
  SKIP_UNLESS_USABLE(std::string("nic"));
  for (const auto& [name, extra] : {std::pair{"large_transfers", ""}, std::pair{"many_to_one", "--mb=4"}}) {
    std::vector<std::string> argv = {kBsprun,
                                     "-n",
                                     "4",
                                     "--transport=nic",
                                     std::string("--nic-rx=") + rx,
                                     std::string("--nic-tx=") + tx,
                                     "--stats",
                                     "--fault=" + kLosses[1].spec(),
                                     kCases,
                                     std::string("--case=") + name};
    if (*extra) argv.push_back(extra);
    ProgramResult result = run_program(argv, 180s);
    ASSERT_EQ(result.exit_code, 0) << name << ": " << describe(result);
    EXPECT_NE(result.out.find(std::string("case ") + name + " passed"), std::string::npos) << describe(result);
    EXPECT_GT(stats_total(result, "retransmissions"), 0) << describe(result);
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, NicModeUnderLossTest,
                         ::testing::Values(std::pair{"v3", "send"}, std::pair{"v2", "ring"}),
                         [](const auto& info) { return std::string(info.param.first) + "_" + info.param.second; });

TEST(FaultOptionTest, ReliableStreamRefusesIt) {
  ProgramResult result = run_program(
      {kBsprun, "-n", "2", "--transport=tcp", "--fault=drop=0.1", kCases, "--case=put_all_to_all"}, 60s);
  EXPECT_NE(result.exit_code, 0) << describe(result);
  EXPECT_NE(result.err.find("--fault needs a datagram transport"), std::string::npos) << describe(result);
}

}  // namespace
