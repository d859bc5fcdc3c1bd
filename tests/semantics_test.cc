// tests/semantics_test.cc: the BSPlib semantics cases of tests/bsp_cases.cc, run under
// bsprun on every transport this build has, on 1, 2, 3, 4 and 8 processes; then the
// cases that must fail (abort, a killed process, each misuse) with their messages, and
// the ways of starting a job (bsprun, directly, bsp_begin asking for fewer).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <future>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <tuple>
#include <vector>

#include "recovery/spin_policy.h"
#include "tests/holding_cases.h"
#include "tests/run_program.h"

namespace {

using bsp::testing::describe;
using bsp::testing::ProgramResult;
using bsp::testing::run_program;
using bsp::testing::stats_total;
using namespace std::chrono_literals;

const std::string kBsprun = "bsplib/bsprun";
const std::string kCases = "tests/bsp_cases";

bool transport_available(const std::string& transport) { return bsp::testing::transport_usable(kBsprun, transport); }

// sync: bsprun's --sync (auto: dense on the 1 to 8 processes here).
ProgramResult run_case(const std::string& transport, int procs, const std::string& name, const std::string& input = "",
                       std::chrono::milliseconds deadline = 120s, const std::string& sync = "auto") {
  return run_program(
      {kBsprun, "-n", std::to_string(procs), "--transport=" + transport, "--sync=" + sync, kCases, "--case=" + name},
      deadline, input);
}

// ---- semantics that must hold ----
using Semantics = std::tuple<std::string, int, std::string, std::string>;  // transport, procs, case, sync

class SemanticsTest : public ::testing::TestWithParam<Semantics> {};

TEST_P(SemanticsTest, Holds) {
  const auto& [transport, procs, name, sync] = GetParam();
  if (!transport_available(transport)) GTEST_SKIP() << "transport " << transport << " is not built in or needs root";
  ProgramResult result = run_case(transport, procs, name, name == "stdin_to_pid0" ? "12345\n" : "", 120s, sync);
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_NE(result.out.find("case " + name + " passed"), std::string::npos) << describe(result);
}

const std::vector<std::string> kHoldingCases = bsp::testing::kAllHoldingCases;

std::string semantics_name(const ::testing::TestParamInfo<Semantics>& info) {
  const auto& [transport, procs, name, sync] = info.param;
  return transport + "_p" + std::to_string(procs) + (sync == "auto" ? "" : "_" + sync) + "_" + name;
}

INSTANTIATE_TEST_SUITE_P(AllTransports, SemanticsTest,
                         ::testing::Combine(::testing::Values("tcp", "udp", "nic", "shm"),
                                            ::testing::Values(1, 2, 3, 4, 8), ::testing::ValuesIn(kHoldingCases),
                                            ::testing::Values("auto")),
                         semantics_name);
// The same with the sparse superstep protocol forced (auto takes it from 16 processes).
INSTANTIATE_TEST_SUITE_P(SparseSync, SemanticsTest,
                         ::testing::Combine(::testing::Values("tcp", "udp", "nic", "shm"),
                                            ::testing::Values(1, 2, 3, 4, 8), ::testing::ValuesIn(kHoldingCases),
                                            ::testing::Values("sparse")),
                         semantics_name);

// Over tcp with at most 2 connections open per process (--tcp-connections=2) at p = 8:
// connections are made on first use and the least recently used closed in order while
// every case runs, and the results are the same.
class TcpConnectionLimitTest : public ::testing::TestWithParam<std::string> {};

TEST_P(TcpConnectionLimitTest, Holds) {
  const std::string& name = GetParam();
  if (!transport_available("tcp")) GTEST_SKIP() << "transport tcp is not built in";
  ProgramResult result = run_program(
      {kBsprun, "-n", "8", "--transport=tcp", "--tcp-connections=2", "--stats", kCases, "--case=" + name}, 120s,
      name == "stdin_to_pid0" ? "12345\n" : "");
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_NE(result.out.find("case " + name + " passed"), std::string::npos) << describe(result);
  EXPECT_EQ(bsp::testing::stats_total(result, "tcp_refused"), 0) << describe(result);
  // Every case syncs (an `end` to every peer): 7 peers through 2 connections means closes.
  EXPECT_GT(bsp::testing::stats_total(result, "tcp_closed"), 0) << describe(result);
  // At most twice the limit open at once in any process: 8 processes, at most 32 in all.
  EXPECT_LE(bsp::testing::stats_total(result, "tcp_peak_open"), 8 * 4) << describe(result);
}

INSTANTIATE_TEST_SUITE_P(tcp_p8_limit2, TcpConnectionLimitTest, ::testing::ValuesIn(kHoldingCases),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// The same cases with put combining off (bsprun --combine-puts=0): one record per put,
// and the same results.
TEST(CombinePutsOff, OneRecordPerPutSameResults) {
  for (const char* transport : {"tcp", "udp", "shm"}) {
    if (!transport_available(transport)) continue;
    for (int procs : {2, 3}) {
      for (std::string name : {"combined_puts", "strided_puts"}) {
        ProgramResult result = run_program(
            {kBsprun, "-n", std::to_string(procs), std::string("--transport=") + transport, "--combine-puts=0", kCases,
             "--case=" + name},
            60s);
        EXPECT_EQ(result.exit_code, 0) << transport << " p=" << procs << ": " << describe(result);
        EXPECT_NE(result.out.find("case " + name + " passed"), std::string::npos) << describe(result);
      }
    }
  }
}

// A pool far smaller than the large cases' puts (bsprun --buffers): the channel refuses
// most pieces of each, so the engine takes the acknowledgements that came and offers a
// piece again, or copies it into the stream, while the peers' own large puts, hp-puts and
// get replies arrive meanwhile. Data, order and the standard's rules hold, and the
// refusals did happen (--stats: send_waits).
TEST(SmallPool, LargeTransfersHoldWhilePiecesAreRefused) {
  for (const char* transport : {"udp", "nic"}) {
    if (!transport_available(transport)) continue;
    for (int procs : {2, 4}) {
      for (std::string name : {"large_transfers", "large_gathered"}) {
        ProgramResult result = run_program(
            {kBsprun, "-n", std::to_string(procs), std::string("--transport=") + transport, "--buffers=64", "--stats",
             kCases, "--case=" + name},
            120s);
        EXPECT_EQ(result.exit_code, 0) << transport << " p=" << procs << ": " << describe(result);
        EXPECT_NE(result.out.find("case " + name + " passed"), std::string::npos) << describe(result);
        EXPECT_GT(stats_total(result, "send_waits"), 0) << transport << " p=" << procs << ": no piece refused\n"
                                                        << describe(result);
      }
    }
  }
}

// ---- failures that must stop the job with a clear message ----
using Failure = std::tuple<std::string, int, std::string>;  // transport, procs, sync

class FailureTest : public ::testing::TestWithParam<Failure> {
 protected:
  void SetUp() override {
    if (!transport_available(transport())) GTEST_SKIP() << "transport " << transport() << " is not built in";
  }
  const std::string& transport() const { return std::get<0>(GetParam()); }
  int procs() const { return std::get<1>(GetParam()); }
  const std::string& sync() const { return std::get<2>(GetParam()); }
};

TEST_P(FailureTest, AbortPrintsMessageOnceAndFails) {
  ProgramResult result = run_case(transport(), procs(), "abort_with_message", "", 30s, sync());
  EXPECT_FALSE(result.timed_out) << describe(result);
  EXPECT_NE(result.exit_code, 0) << describe(result);
  EXPECT_EQ(bsp::testing::count_occurrences(result.err, "custom abort message 42 from the test"), 1)
      << describe(result);
  // Every process stops on the coordinator's word, not when it is killed after the grace
  // period (3 s).
  EXPECT_LT(result.seconds, 2.5) << describe(result);
}

TEST_P(FailureTest, KilledProcessStopsTheOthersNamingIt) {
  if (procs() < 2) GTEST_SKIP() << "needs a process to survive the killed one";
  ProgramResult reference = run_case(transport(), procs(), "put_all_to_all", "", 60s, sync());
  ASSERT_EQ(reference.exit_code, 0) << describe(reference);
  ProgramResult result = run_case(transport(), procs(), "killed_process", "", 60s, sync());
  EXPECT_FALSE(result.timed_out) << describe(result);
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.err.find("pid " + std::to_string(procs() - 1)), std::string::npos) << describe(result);
  EXPECT_NE(result.err.find("signal 9"), std::string::npos) << describe(result);
  // Promptly: 7 s on an idle machine, or a multiple of a clean job's time now.
  EXPECT_LT(result.seconds, bsp::testing::calibrated_bound(5.0 + 2.0, reference)) << describe(result);
}

TEST_P(FailureTest, PutToUnregisteredAddress) {
  ProgramResult result = run_case(transport(), procs(), "put_unregistered", "", 30s, sync());
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.err.find("bsp_put on pid"), std::string::npos) << describe(result);
  EXPECT_NE(result.err.find("is not registered"), std::string::npos) << describe(result);
}

TEST_P(FailureTest, PutOutsideRegistration) {
  ProgramResult result = run_case(transport(), procs(), "put_outside_registration", "", 30s, sync());
  EXPECT_NE(result.exit_code, 0);
  std::string expected = "bsp_put by pid " + std::to_string(procs() - 1) + " into pid 0: offset 4 + 12 bytes";
  EXPECT_NE(result.err.find(expected), std::string::npos) << describe(result);
  EXPECT_NE(result.err.find("(8 bytes on pid 0)"), std::string::npos) << describe(result);
}

// At library level 2 the call is not checked against the remote registration: the
// destination stops the job when the put's header arrives (before its data).
TEST_P(FailureTest, PutOutsideRegistrationCaughtWhereItLands) {
  ProgramResult result = run_program(
      {kBsprun, "-n", std::to_string(procs()), "--transport=" + transport(), "--sync=" + sync(), "--library-level=2",
       kCases, "--case=put_outside_registration"},
      30s);
  EXPECT_NE(result.exit_code, 0);
  std::string expected = "bsp_put by pid " + std::to_string(procs() - 1) + " into pid 0: offset 4 + 12 bytes";
  EXPECT_NE(result.err.find(expected), std::string::npos) << describe(result);
}

// A strided record (puts of one size at equal steps, combined) is checked as a whole where
// it lands: its last put lies outside, so the run's header stops the job.
TEST_P(FailureTest, StridedPutOutsideRegistrationCaughtWhereItLands) {
  ProgramResult result = run_program(
      {kBsprun, "-n", std::to_string(procs()), "--transport=" + transport(), "--sync=" + sync(), "--library-level=2",
       kCases, "--case=strided_put_outside_registration"},
      30s);
  EXPECT_NE(result.exit_code, 0);
  std::string expected = "bsp_put by pid " + std::to_string(procs() - 1) + " into pid 0: offset 0 + 20 bytes";
  EXPECT_NE(result.err.find(expected), std::string::npos) << describe(result);
  EXPECT_NE(result.err.find("(16 bytes on pid 0)"), std::string::npos) << describe(result);
}

// At the default library level the same run is stopped at the call of the put that leaves
// the registration, also when the puts before it were appended by put()'s inline path.
TEST_P(FailureTest, StridedPutOutsideRegistrationCaughtAtTheCall) {
  ProgramResult result = run_case(transport(), procs(), "strided_put_outside_registration", "", 30s, sync());
  EXPECT_NE(result.exit_code, 0);
  std::string expected = "bsp_put by pid " + std::to_string(procs() - 1) + " into pid 0: offset 16 + 4 bytes";
  EXPECT_NE(result.err.find(expected), std::string::npos) << describe(result);
  EXPECT_NE(result.err.find("(16 bytes on pid 0)"), std::string::npos) << describe(result);
}

TEST_P(FailureTest, GetOutsideRegistration) {
  ProgramResult result = run_case(transport(), procs(), "get_outside_registration", "", 30s, sync());
  EXPECT_NE(result.exit_code, 0);
  std::string expected = "bsp_get by pid " + std::to_string(procs() - 1) + " from pid 0: offset 0 + 12 bytes";
  EXPECT_NE(result.err.find(expected), std::string::npos) << describe(result);
}

TEST_P(FailureTest, RegistrationOrderDiffers) {
  if (procs() < 2) GTEST_SKIP() << "needs two processes to differ";
  ProgramResult result = run_case(transport(), procs(), "registration_mismatch", "", 30s, sync());
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.err.find("registrations differ between processes"), std::string::npos) << describe(result);
}

TEST_P(FailureTest, PidOutOfRange) {
  ProgramResult result = run_case(transport(), procs(), "bad_pid", "", 30s, sync());
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.err.find("pid " + std::to_string(procs()) + " is out of range"), std::string::npos)
      << describe(result);
}

TEST_P(FailureTest, MismatchedEndNamesBothSides) {
  if (procs() < 2) GTEST_SKIP() << "needs two processes to differ";
  ProgramResult result = run_case(transport(), procs(), "mismatched_end", "", 30s, sync());
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.err.find("mismatched collective calls in superstep 1"), std::string::npos) << describe(result);
  EXPECT_NE(result.err.find("called bsp_end"), std::string::npos) << describe(result);
  EXPECT_NE(result.err.find("pid 0 called bsp_end"), std::string::npos) << describe(result);
}

TEST_P(FailureTest, TagSizesDiffer) {
  if (procs() < 2) GTEST_SKIP() << "needs two processes to differ";
  ProgramResult result = run_case(transport(), procs(), "tagsize_mismatch", "", 30s, sync());
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.err.find("bsp_set_tagsize differs between processes in superstep 0"), std::string::npos)
      << describe(result);
}

std::string failure_name(const ::testing::TestParamInfo<Failure>& info) {
  const auto& [transport, procs, sync] = info.param;
  return transport + "_p" + std::to_string(procs) + (sync == "auto" ? "" : "_" + sync);
}

INSTANTIATE_TEST_SUITE_P(AllTransports, FailureTest,
                         ::testing::Combine(::testing::Values("tcp", "udp", "nic", "shm"), ::testing::Values(1, 2, 4),
                                            ::testing::Values("auto")),
                         failure_name);
INSTANTIATE_TEST_SUITE_P(SparseSync, FailureTest,
                         ::testing::Combine(::testing::Values("tcp", "udp", "nic", "shm"), ::testing::Values(1, 2, 4),
                                            ::testing::Values("sparse")),
                         failure_name);

// ---- the progress watchdog ----
TEST(WatchdogTest, LongWaitNamesTheProcessThatHasNotArrived) {
  ProgramResult result = run_program({kBsprun, "-n", "3", "--stall-warn=1", kCases, "--case=slow_process"}, 30s);
  EXPECT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_NE(result.err.find("in bsp_sync (superstep 1) for pid 2 (last data moved"), std::string::npos)
      << describe(result);
  EXPECT_NE(result.err.find("not known to wait in bsp_sync: computing"), std::string::npos) << describe(result);
}

TEST(WatchdogTest, CutDataLinkStopsTheJob) {
  for (const std::string transport : {"udp", "nic"}) {
    if (!transport_available(transport)) continue;
    ProgramResult reference = run_case(transport, 2, "put_all_to_all", "", 60s);
    ASSERT_EQ(reference.exit_code, 0) << describe(reference);
    ProgramResult result = run_program({kBsprun, "-n", "2", "--transport=" + transport, "--fault=drop=1",
                                        "--stall-warn=0.5", "--link-timeout=2", kCases, "--case=put_all_to_all"},
                                       30s);
    EXPECT_NE(result.exit_code, 0) << transport << "\n" << describe(result);
    EXPECT_FALSE(result.timed_out) << transport;
    EXPECT_NE(result.err.find("the data link between pid 0 and pid 1 carries nothing"), std::string::npos)
        << transport << "\n"
        << describe(result);
    // The link timeout (2 s) and the stop: 10 s idle, or 2 s + a multiple of a clean job.
    EXPECT_LT(result.seconds, 2.0 + bsp::testing::calibrated_bound(8.0, reference)) << transport << "\n"
                                                                                    << describe(result);
  }
}

// --stats shows what the fault injector did next to what the reliable layer saw of it.
TEST(StatsTest, FaultInjectorCountsAreReported) {
  ProgramResult result = run_program({kBsprun, "-n", "2", "--transport=udp", "--fault=drop=0.2,corrupt=0.05,seed=1",
                                      "--stats", kCases, "--case=many_small_puts"},
                                     60s);
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_GT(bsp::testing::stats_total(result, "fault_dropped"), 0) << describe(result);
  EXPECT_GT(bsp::testing::stats_total(result, "fault_corrupted"), 0) << describe(result);
  EXPECT_GT(bsp::testing::stats_total(result, "retransmissions"), 0) << describe(result);
}

// Over tcp, --stats shows what set-up refused (nothing, in a job nobody attacks).
TEST(StatsTest, TcpSetUpRefusalsAreReported) {
  ProgramResult result = run_program(
      {kBsprun, "-n", "3", "--transport=tcp", "--stats", kCases, "--case=put_all_to_all"}, 60s);
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_EQ(bsp::testing::stats_total(result, "tcp_refused"), 0) << describe(result);
  EXPECT_EQ(bsp::testing::stats_total(result, "tcp_unproven_peers"), 0) << describe(result);
}

// With a core each or two processes per core, each process finds its neighbours on the
// machine by the OS pid and start time their hellos reported, so its waits may spin on
// while only the job runs (--stats: idle_spin_us 5000 each); a given --spin-us keeps it off.
TEST(StatsTest, TheSpinGoesOnWithACoreEachOrShared) {
  const int cores = bsp::recovery::usable_cores();
  if (2 * cores > bsp::recovery::kIdleMachineMaxProcesses) {
    GTEST_SKIP() << 2 * cores << " processes: beyond the " << bsp::recovery::kIdleMachineMaxProcesses
                 << " the census reads";
  }
  for (int procs : {cores, 2 * cores}) {
    ProgramResult result = run_program(
        {kBsprun, "-n", std::to_string(procs), "--transport=shm", "--stats", kCases, "--case=put_all_to_all"}, 120s);
    ASSERT_EQ(result.exit_code, 0) << describe(result);
    EXPECT_EQ(stats_total(result, "idle_spin_us"), bsp::recovery::kIdleMachineSpinUs * procs)
        << procs << " processes: " << describe(result);
  }
  const int procs = 2 * cores;
  ProgramResult fixed = run_program({kBsprun, "-n", std::to_string(procs), "--transport=shm", "--spin-us=1000",
                                     "--stats", kCases, "--case=put_all_to_all"},
                                    120s);
  ASSERT_EQ(fixed.exit_code, 0) << describe(fixed);
  EXPECT_EQ(stats_total(fixed, "idle_spin_us"), 0) << describe(fixed);
}

// ---- ways of starting a job ----
TEST(StartTest, CallOutsideBeginIsReported) {
  ProgramResult result = run_program({kCases, "--case=call_outside_begin"}, 30s);
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.err.find("bsp_sync called outside bsp_begin"), std::string::npos) << describe(result);
}

TEST(StartTest, DirectStartWithoutLauncher) {
  for (int procs : {1, 3, 4}) {
    ProgramResult result = run_program({kCases, "--case=put_all_to_all", "--procs=" + std::to_string(procs)}, 60s);
    EXPECT_EQ(result.exit_code, 0) << describe(result);
    EXPECT_NE(result.out.find("case put_all_to_all passed"), std::string::npos) << describe(result);
  }
}

TEST(StartTest, DirectStartAbortAndKill) {
  ProgramResult aborted = run_program({kCases, "--case=abort_with_message", "--procs=3"}, 30s);
  EXPECT_NE(aborted.exit_code, 0) << describe(aborted);
  EXPECT_EQ(bsp::testing::count_occurrences(aborted.err, "custom abort message 42"), 1) << describe(aborted);
  ProgramResult killed = run_program({kCases, "--case=killed_process", "--procs=3"}, 30s);
  EXPECT_FALSE(killed.timed_out) << describe(killed);
  EXPECT_NE(killed.exit_code, 0);
  EXPECT_NE(killed.err.find("pid 2"), std::string::npos) << describe(killed);
}

TEST(StartTest, BeginAsksForFewerThanLaunched) {
  ProgramResult result = run_program({kBsprun, "-n", "4", kCases, "--case=put_all_to_all", "--procs=2"}, 60s);
  EXPECT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_NE(result.out.find("case put_all_to_all passed"), std::string::npos) << describe(result);
}

TEST(StartTest, UnknownTransportIsReported) {
  ProgramResult result = run_program({kBsprun, "-n", "2", "--transport=carrier-pigeon", kCases, "--case=enquiry"}, 30s);
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.err.find("unknown transport 'carrier-pigeon'"), std::string::npos) << describe(result);
}

TEST(StartTest, TransportChosenByEnvironment) {
  ProgramResult result = run_program({kCases, "--case=put_all_to_all", "--procs=2"}, 60s, "",
                                     {{"BSP_TRANSPORT", "nonesuch"}});
  EXPECT_NE(result.exit_code, 0);
  EXPECT_LT(result.seconds, 10.0) << "a failed start must stop the job promptly";
  EXPECT_NE(result.err.find("unknown transport 'nonesuch'"), std::string::npos) << describe(result);
}

}  // namespace

namespace {

TEST(TraceTest, EveryProcessWritesAPcapOfItsFrames) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string base = std::string(tmp ? tmp : "/tmp") + "/trace.pcap";
  ProgramResult result = run_program({kBsprun, "-n", "3", "--trace=" + base, kCases, "--case=put_all_to_all"}, 60s);
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  for (int pid = 0; pid < 3; ++pid) {
    std::string file = base.substr(0, base.size() - 5) + "." + std::to_string(pid) + ".pcap";
    FILE* trace = std::fopen(file.c_str(), "rb");
    ASSERT_NE(trace, nullptr) << file;
    std::uint32_t magic = 0;
    ASSERT_EQ(std::fread(&magic, 4, 1, trace), 1u);
    std::fseek(trace, 0, SEEK_END);
    long size = std::ftell(trace);
    std::fclose(trace);
    EXPECT_EQ(magic, 0xa1b2c3d4u) << file;  // libpcap's classic file format
    // Header (24 bytes) plus several records: a process sends and receives frames every superstep.
    EXPECT_GT(size, 24 + 4 * (16 + 14 + 32)) << file;
  }
}

}  // namespace

namespace {

// Two jobs at once on the same host (for nic: the same interface, lo) never see each
// other's frames: both finish with the right data.
TEST(ConcurrentJobsTest, TwoJobsSideBySide) {
  for (const std::string transport : {"tcp", "udp", "nic", "shm"}) {
    if (!transport_available(transport)) continue;
    auto run_job = [&] {
      return run_program({kBsprun, "-n", "3", "--transport=" + transport, kCases, "--case=many_small_puts"}, 120s);
    };
    auto first = std::async(std::launch::async, run_job);
    auto second = std::async(std::launch::async, run_job);
    ProgramResult a = first.get();
    ProgramResult b = second.get();
    if (a.err.find("CAP_NET_RAW") != std::string::npos) continue;  // nic without privileges
    EXPECT_EQ(a.exit_code, 0) << transport << "\n" << describe(a);
    EXPECT_EQ(b.exit_code, 0) << transport << "\n" << describe(b);
  }
}

}  // namespace
