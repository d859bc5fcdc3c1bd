// tests/bench_smoke_test.cc: every benchmark in bench/ (and the programs experiments/
// feeds its model with, and put_handoff) runs briefly (tiny counts; over tcp where it is a
// BSP program) and prints its result, and
// every program in bench/ answers --help with its usage, so a broken benchmark is caught
// by the test suite. The numbers are not checked: benchmarks measure, tests only see that they work.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/run_program.h"

namespace {

using bsp::testing::describe;
using bsp::testing::ProgramResult;
using bsp::testing::run_program;
using namespace std::chrono_literals;

const std::string kBsprun = "bsplib/bsprun";

struct Smoke {
  std::string name;
  std::vector<std::string> argv;
  std::vector<std::string> expected;  // strings the output must contain
};

std::vector<std::string> under_bsprun(int procs, const std::string& program, std::vector<std::string> args) {
  std::vector<std::string> argv = {kBsprun, "-n", std::to_string(procs), "--transport=tcp", program};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

class BenchSmokeTest : public ::testing::TestWithParam<Smoke> {};

TEST_P(BenchSmokeTest, RunsAndPrintsItsResult) {
  const Smoke& smoke = GetParam();
  ProgramResult result = run_program(smoke.argv, 120s);
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  for (const std::string& expected : smoke.expected) {
    EXPECT_NE(result.out.find(expected), std::string::npos) << "missing \"" << expected << "\"\n" << describe(result);
  }
}

INSTANTIATE_TEST_SUITE_P(
    EveryBenchmark, BenchSmokeTest,
    ::testing::Values(
        Smoke{"bsp_roundtrip",
              under_bsprun(2, "bench/bsp_roundtrip", {"--repetitions=20", "--warmup=2", "--sizes=4,1400"}),
              {"round_trip_min_us", "tcp,2,4,20,", "tcp,2,1400,20,"}},
        Smoke{"bsp_bandwidth",
              under_bsprun(2, "bench/bsp_bandwidth", {"--repetitions=1", "--max-count=100", "--sizes=1400"}),
              {"best_MBps", "tcp,2,1400,100,0,"}},
        Smoke{"bsp_bandwidth_several_supersteps",
              under_bsprun(3, "bench/bsp_bandwidth",
                           {"--repetitions=1", "--max-count=100", "--per-superstep=30", "--sizes=4"}),
              {"tcp,3,4,100,30,"}},
        Smoke{"bsp_spray_send",
              under_bsprun(2, "bench/bsp_spray", {"--max-i=20", "--messages=40", "--max-repetitions=2"}),
              {"median_us_per_message", "tcp,2,send,4,20,", "tcp,2,send,1400,20,"}},
        Smoke{"bsp_spray_put",
              under_bsprun(2, "bench/bsp_spray", {"--via=put", "--max-i=20", "--messages=40"}),
              {"tcp,2,put,4,20,", "tcp,2,put,1400,20,"}},
        Smoke{"bsp_params",
              under_bsprun(4, "bench/bsp_params", {"--h-max=64", "--iterations=2", "--daxpy-iterations=100"}),
              {"tcp,4,64,", "r_mflops,g_flops_per_word,l_flops", "\ntcp,4,"}},
        Smoke{"sync_time",
              under_bsprun(2, "bench/sync_time", {"100"}),
              {"transport=tcp p=2", "bsp_sync, no communication"}},
        Smoke{"sync_scaling",
              under_bsprun(3, "experiments/sync_scaling",
                           {"--budget-ms=1", "--min-supersteps=5", "--max-supersteps=5", "--warmup=2"}),
              {"mean_us,median_us", "cpu_us_per_proc,voluntary_switches_per_proc", "tcp,3,empty,5,",
               "tcp,3,neighbour,5,"}},
        Smoke{"wake_cost",
              {"experiments/wake_cost", "--procs=2,3", "--rounds=20", "--budget-ms=1", "--warmup=2",
               "--patterns=rounds,ring,alltoall"},
              {"rusage_cpu_us_per_message", "rounds,spin,3,", "rounds,yield,2,", "rounds,block,3,", "ring,spin,3,",
               "alltoall,block,3,"}},
        Smoke{"put_handoff",  // ("put_handoff: ... skipped" where fewer than two CPUs are allowed)
              {"experiments/put_handoff", "--size=65536", "--rounds=3"},
              {"handoff"}},
        Smoke{"put_handoff_help", {"experiments/put_handoff", "--help"}, {"usage:", "put_handoff"}},
        Smoke{"layer_pingpong_transport",
              {"bench/layer_pingpong", "--transport=tcp", "--layer=transport", "--repetitions=50"},
              {"layer=transport transport=tcp size=4 round_trip_us median="}},
        Smoke{"layer_pingpong_channel_bandwidth",
              {"bench/layer_pingpong", "--transport=tcp", "--layer=channel", "--test=bandwidth", "--size=1400",
               "--count=200"},
              {"layer=channel transport=tcp size=1400 count=200 bandwidth_MBps="}},
        Smoke{"bsp_roundtrip_help", {"bench/bsp_roundtrip", "--help"}, {"usage:", "bsp_roundtrip"}},
        Smoke{"bsp_bandwidth_help", {"bench/bsp_bandwidth", "--help"}, {"usage:", "bsp_bandwidth"}},
        Smoke{"bsp_spray_help", {"bench/bsp_spray", "--help"}, {"usage:", "bsp_spray"}},
        Smoke{"bsp_params_help", {"bench/bsp_params", "--help"}, {"usage:", "bsp_params"}},
        Smoke{"sync_time_help", {"bench/sync_time", "--help"}, {"usage:", "sync_time"}},
        Smoke{"layer_pingpong_help", {"bench/layer_pingpong", "--help"}, {"usage:", "layer_pingpong"}},
        Smoke{"cpp_vs_c_help", {"bench/cpp_vs_c", "--help"}, {"usage:", "cpp_vs_c"}},
        Smoke{"shm_floors_help", {"bench/shm_floors", "--help"}, {"usage:", "shm_floors"}},
        Smoke{"tcp_stream_floor_help", {"bench/tcp_stream_floor", "--help"}, {"usage:", "tcp_stream_floor"}},
        Smoke{"udp_stream_floor_help", {"bench/udp_stream_floor", "--help"}, {"usage:", "udp_stream_floor"}},
        Smoke{"udp_stream_floor_segmented",
              {"bench/udp_stream_floor", "--size=1472", "--gso=1", "--gro=1", "--total=1048576", "--repetitions=1",
               "--csv=1"},
              {"udp_stream,1472,1,1,"}}),
    [](const ::testing::TestParamInfo<Smoke>& info) { return info.param.name; });

}  // namespace
