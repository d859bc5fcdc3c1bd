// tests/sparse_sync_test.cc: the sparse superstep protocol at the scale it is for.
//   - Frames per process for an empty superstep at p = 16, counted by `bsprun --stats`
//     (data frames plus the reliable layer's acks, nacks and probes): at most
//     2⌈log₂ p⌉ + 2 with --sync=sparse on every transport, p − 1 with --sync=dense.
//   - A ring superstep (each process puts to pid + 1, its barrier partner of round 0)
//     sends no more than an empty one, at most ⌈log₂ p⌉ + 1 frames: the records to a
//     partner ahead are not acknowledged and share a frame with the barrier message
//     behind them (they were 2 frames more); the ring's values are checked every step.
//   - A 64-process job over udp (auto chooses sparse there) runs every semantics case of
//     tests/bsp_cases.cc.
#include <gtest/gtest.h>

#include <string>
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

double frames_per_process_superstep(const ProgramResult& result) {
  double frames = 0;
  for (const char* key : {"data_sent", "explicit_acks", "nacks", "probes"}) frames += stats_total(result, key);
  double supersteps = stats_total(result, "supersteps");  // summed over processes, like the frames
  return supersteps > 0 ? frames / supersteps : -1;
}

class FramesTest : public ::testing::TestWithParam<std::string> {};

TEST_P(FramesTest, EmptySuperstepSendsLogarithmicallyMany) {
  const std::string& transport = GetParam();
  if (!bsp::testing::transport_usable(kBsprun, transport)) {
    GTEST_SKIP() << "transport " << transport << " is not built in or needs root";
  }
  const int p = 16, bound = 2 * 4 + 2;
  double per_protocol[2];
  for (int sparse = 0; sparse < 2; ++sparse) {
    // (dense over shm: with its `end`s in frames, not superstep lines)
    ProgramResult result = run_program(
        {kBsprun, "-n", std::to_string(p), "--transport=" + transport, sparse ? "--sync=sparse" : "--sync=dense",
         "--superstep-lines=0", "--stats", kCases, "--case=empty_supersteps"},
        180s);
    ASSERT_EQ(result.exit_code, 0) << describe(result);
    per_protocol[sparse] = frames_per_process_superstep(result);
  }
  EXPECT_GE(per_protocol[0], p - 1) << "dense sends an `end` to each of the others";
  if (transport == "shm") {  // superstep lines: an empty superstep sends no frame at all
    ProgramResult lines = run_program({kBsprun, "-n", std::to_string(p), "--transport=shm", "--sync=dense", "--stats",
                                       kCases, "--case=empty_supersteps"},
                                      180s);
    ASSERT_EQ(lines.exit_code, 0) << describe(lines);
    EXPECT_LT(frames_per_process_superstep(lines), 0.1) << describe(lines);
  }
  EXPECT_GT(per_protocol[1], 0);
  EXPECT_LE(per_protocol[1], bound) << "sparse: the barrier's ⌈log₂ p⌉ and a few acks";
  std::printf("%s p=%d frames per process per empty superstep: dense %.2f, sparse %.2f\n", transport.c_str(), p,
              per_protocol[0], per_protocol[1]);
}

TEST_P(FramesTest, RingSuperstepSendsNoMoreThanAnEmptyOne) {
  const std::string& transport = GetParam();
  if (!bsp::testing::transport_usable(kBsprun, transport)) {
    GTEST_SKIP() << "transport " << transport << " is not built in or needs root";
  }
  const int p = 16, bound = 4 + 1;
  ProgramResult result = run_program({kBsprun, "-n", std::to_string(p), "--transport=" + transport, "--sync=sparse",
                                      "--stats", kCases, "--case=many_supersteps"},
                                     180s);
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  double frames = frames_per_process_superstep(result);
  EXPECT_GT(frames, 0);
  EXPECT_LE(frames, bound) << "the barrier's ⌈log₂ p⌉, the records riding with round 0's message";
  std::printf("%s p=%d frames per process per ring superstep: sparse %.2f\n", transport.c_str(), p, frames);
}

INSTANTIATE_TEST_SUITE_P(AllTransports, FramesTest, ::testing::Values("tcp", "udp", "nic", "shm"));

class SixtyFourOverUdp : public ::testing::TestWithParam<std::string> {};

TEST_P(SixtyFourOverUdp, Holds) {
  const std::string& name = GetParam();
  ProgramResult result = run_program({kBsprun, "-n", "64", "--transport=udp", kCases, "--case=" + name}, 300s,
                                     name == "stdin_to_pid0" ? "12345\n" : "");
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_NE(result.out.find("case " + name + " passed"), std::string::npos) << describe(result);
}

INSTANTIATE_TEST_SUITE_P(SemanticsCases, SixtyFourOverUdp,
                         ::testing::Values("put_all_to_all", "get_before_put", "overlapping_puts", "put_copies_source",
                                           "hp_variants", "registration_order_and_pop", "tagsize_states",
                                           "bsmp_all_to_all", "many_supersteps", "empty_supersteps", "large_transfers",
                                           "many_small_puts", "zero_length", "enquiry", "stdin_to_pid0", "many_to_one",
                                           "combined_puts", "racing_puts_and_gets"));

}  // namespace
