// tests/launcher_test.cc: what a user meets first under bsprun (programs of
// launcher_cases.c):
//  - without -n, bsprun starts one process per core it may run on, or with --hosts one
//    per slot (as mpirun does; a direct start uses every core too);
//  - the output of 4 processes printing 3000 lines each into a pipe arrives in whole
//    lines, each process's in its own order;
//  - --stats totals are printed without binary noise (comm_s=0.004135000000000001);
//  - bsp_s, bsp_l and bsp_g (Oxford's) link and give the machine's parameters: BSP_SLG's,
//    a bench/bsp_params CSV's row for the transport and p, else the default with one note;
//  - over shm, a usage error in the first superstep is the job's only message, and a
//    process dying right after bsp_begin is named (not the inbox that vanished with it).
#include <gtest/gtest.h>
#include <sched.h>

#include <cstdlib>
#include <fstream>
#include <regex>
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
const std::string kCases = "tests/launcher_cases";

int cores_here() {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  return ::sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) : 1;
}

TEST(DefaultProcessCount, IsTheCoresAvailable) {
  ProgramResult result = run_program({kBsprun, kCases, "--case=nprocs"}, 60s);
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_EQ(result.out, "nprocs " + std::to_string(cores_here()) + "\n") << describe(result);
}

TEST(DefaultProcessCount, IsTheSlotsOfTheHosts) {
  // This host by its address: started locally, without a remote shell.
  ProgramResult result = run_program({kBsprun, "--hosts=127.0.0.1:3", kCases, "--case=nprocs"}, 60s);
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_EQ(result.out, "nprocs 3\n") << describe(result);
}

TEST(Output, WholeLinesIntoAPipe) {
  const int p = 4, lines = 3000;
  for (const char* transport : {"shm", "tcp"}) {
    ProgramResult result = run_program(
        {kBsprun, "-n", std::to_string(p), std::string("--transport=") + transport, kCases, "--case=lines"}, 120s);
    ASSERT_EQ(result.exit_code, 0) << describe(result).substr(0, 4000);
    const std::regex whole("pid ([0-9]+) line ([0-9]+) ([a-z]+) end");
    std::vector<int> next(p, 0);
    int broken = 0, total = 0;
    std::istringstream in(result.out);
    std::string line;
    while (std::getline(in, line)) {
      ++total;
      std::smatch m;
      if (!std::regex_match(line, m, whole)) {
        ++broken;
        continue;
      }
      int pid = std::stoi(m[1]), k = std::stoi(m[2]);
      ASSERT_LT(pid, p) << line;
      EXPECT_EQ(k, next[static_cast<std::size_t>(pid)]) << "pid " << pid << "'s lines out of order";
      next[static_cast<std::size_t>(pid)] = k + 1;
    }
    EXPECT_EQ(broken, 0) << transport << ": " << broken << " of " << total << " lines broken";
    EXPECT_EQ(total, p * lines) << transport;
  }
}

TEST(Stats, TotalsHaveNoBinaryNoise) {
  ProgramResult result = run_program({kBsprun, "-n", "4", "--transport=shm", "--stats", kCases, "--case=supersteps"},
                                     60s);
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  auto total = result.err.find("  total ");
  ASSERT_NE(total, std::string::npos) << describe(result);
  std::string line = result.err.substr(total, result.err.find('\n', total) - total);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(line, m, std::regex(" comm_s=([0-9.]+)"))) << line;
  // Each process reports comm_s with 6 decimals; their sum has no more.
  EXPECT_TRUE(std::regex_match(std::string(m[1]), std::regex("[0-9]+\\.[0-9]{6}"))) << line;
  EXPECT_TRUE(std::regex_search(line, std::regex(" supersteps=[0-9]+ "))) << line;  // integers stay integers
}

// A usage error in the first superstep over shm, also with pid 0 slowed down so the
// erring process exits while pid 0 may still be opening the others' inboxes: the job says
// the one real error, once, and nothing about inboxes.
TEST(EarlyUsageError, IsTheOnlyMessageOverShm) {
  for (const char* which : {"--case=bad_first", "--case=bad_first_slow0"}) {
    for (int round = 0; round < 3; ++round) {
      ProgramResult result = run_program({kBsprun, "-n", "4", "--transport=shm", kCases, which}, 60s);
      EXPECT_EQ(result.exit_code, 1) << describe(result);
      EXPECT_EQ(bsp::testing::count_occurrences(result.err, "\n"), 1) << which << "\n" << describe(result);
      EXPECT_NE(result.err.find("bsp_put on pid 3: pid 4 is out of range"), std::string::npos) << describe(result);
      EXPECT_EQ(result.err.find("inbox"), std::string::npos) << describe(result);
    }
  }
}

// The last process dies (SIGKILL) right after its bsp_begin while pid 0, slowed down, may
// still be opening its shm inbox: the job names the dead process, not the inbox that
// vanished with it (before: 2 runs in 5 said "opening pid 3's inbox ...: No such file or
// directory" and nothing else).
TEST(EarlyDeath, IsNamedNotTheVanishedInbox) {
  for (int round = 0; round < 6; ++round) {
    ProgramResult result = run_program({kBsprun, "-n", "4", "--transport=shm", kCases, "--case=killed_first_slow0"},
                                       60s);
    EXPECT_EQ(result.exit_code, 1) << describe(result);
    EXPECT_NE(result.err.find("pid 3 was killed by signal 9"), std::string::npos) << describe(result);
    EXPECT_EQ(result.err.find("inbox"), std::string::npos) << describe(result);
    EXPECT_EQ(bsp::testing::count_occurrences(result.err, "\n"), 1) << describe(result);
  }
}

TEST(MachineParameters, FromTheEnvironmentACsvOrTheDefault) {
  ProgramResult given = run_program({kBsprun, "-n", "2", "--transport=shm", kCases, "--case=slg"}, 60s, "",
                                    {{"BSP_SLG", "250,4000,12.5"}});
  ASSERT_EQ(given.exit_code, 0) << describe(given);
  EXPECT_EQ(given.out, "slg 2.5e+08 4000 12.5\n") << describe(given);

  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string csv = std::string(tmp ? tmp : "/tmp") + "/params.csv";
  std::ofstream(csv) << "transport,p,r_mflops,g_flops_per_word,l_flops,g_us_per_word,l_us\n"
                        "tcp,2,900,50,90000,0.05,100\n"
                        "shm,2,800,6,16000,0.01,20\n"
                        "shm,8,800,9,64000,0.01,80\n";
  ProgramResult measured = run_program({kBsprun, "-n", "2", "--transport=shm", kCases, "--case=slg"}, 60s, "",
                                       {{"BSP_PARAMS", csv}, {"BSP_SLG", ""}});
  ASSERT_EQ(measured.exit_code, 0) << describe(measured);
  EXPECT_EQ(measured.out, "slg 8e+08 16000 6\n") << describe(measured);

  ProgramResult fallback = run_program({kBsprun, "-n", "3", "--transport=shm", kCases, "--case=slg"}, 60s, "",
                                       {{"BSP_PARAMS", csv + ".missing"}, {"BSP_SLG", ""}});
  ASSERT_EQ(fallback.exit_code, 0) << describe(fallback);
  EXPECT_EQ(fallback.out, "slg 1e+09 20000 10\n") << describe(fallback);
  EXPECT_EQ(bsp::testing::count_occurrences(fallback.err, "bsp_s/bsp_l/bsp_g: no measured parameters"), 1)
      << describe(fallback);
}

}  // namespace
