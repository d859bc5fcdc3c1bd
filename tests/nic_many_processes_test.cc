// tests/nic_many_processes_test.cc: nic jobs of many processes on lo start (the segment
// check, transport/nic/segment_check.h, among all of them), run a few supersteps with
// the sparse sync and end cleanly on this 2-core machine: 64 processes in the normal
// tier; 128 and 256 with the manual target //tests:nic_many_processes_256_test (the long
// tier). Each run reports its time and peak resident memory per process (--stats:
// max_rss_kib), checked against a bound. Needs CAP_NET_RAW (root): skipped otherwise.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "tests/run_program.h"

namespace {

using bsp::testing::describe;
using bsp::testing::ProgramResult;
using bsp::testing::run_program;
using namespace std::chrono_literals;

const std::string kBsprun = "bsplib/bsprun";
const std::string kCases = "tests/bsp_cases";

// BSP_TEST_PROCESSES="128 256" (the long tier), else 64.
std::vector<int> job_sizes() {
  std::vector<int> sizes;
  std::istringstream listed(std::getenv("BSP_TEST_PROCESSES") ? std::getenv("BSP_TEST_PROCESSES") : "64");
  for (int p; listed >> p;) sizes.push_back(p);
  return sizes;
}

TEST(NicManyProcesses, StartRunAndEndOnLoopback) {
  if (!bsp::testing::transport_usable(kBsprun, "nic")) GTEST_SKIP() << "nic is not usable here (needs CAP_NET_RAW)";
  for (int procs : job_sizes()) {
    // put_all_to_all: every process sends to every other, the segment check's guarantee used.
    ProgramResult result = run_program({kBsprun, "-n", std::to_string(procs), "--transport=nic", "--sync=sparse",
                                        "--stats", kCases, "--case=put_all_to_all"},
                                       std::chrono::seconds(120 + 2 * procs));
    ASSERT_EQ(result.exit_code, 0) << describe(result);
    EXPECT_NE(result.out.find("case put_all_to_all passed"), std::string::npos) << describe(result);
    std::vector<long> rss = bsp::testing::stats_per_process(result, "max_rss_kib");
    ASSERT_EQ(rss.size(), static_cast<std::size_t>(procs)) << describe(result);
    std::sort(rss.begin(), rss.end());
    long mean = 0;
    for (long value : rss) mean += value;
    mean /= procs;
    std::printf("nic p=%d: %.1f s, peak RSS per process %ld / %ld / %ld KiB (min / mean / max)\n", procs,
                result.seconds, rss.front(), mean, rss.back());
    // The library, the program, the pool's frames in flight and the receive ring as far
    // as frames landed in it: well under 64 MiB each, whatever p.
    EXPECT_LT(rss.back(), 64 * 1024);
  }
}

}  // namespace
