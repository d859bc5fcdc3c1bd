// tests/recovery/runnable_census_test.cc: the census of who runs on this machine that
// lets a waiting process spin on (recovery/runnable_census.h): /proc's stat and loadavg
// lines read right (names with spaces and parentheses, truncated or foreign text); a
// process named by a wrong start time, a missing pid or none at all never makes a census;
// a busy process outside the job is seen, one inside it counted, one that ended ends the
// census.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include "recovery/runnable_census.h"

namespace bsp::recovery {
namespace {

TEST(RunnableCensusTest, ReadsStatLines) {
  char state = 0;
  std::uint64_t ticks = 0;
  ASSERT_TRUE(
      parse_process_stat("4242 (lu) R 4200 4242 4200 0 -1 4194304 1830 0 0 0 512 31 0 0 20 0 1 0 987654 24518656 1520 "
                         "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n",
                         state, ticks));
  EXPECT_EQ(state, 'R');
  EXPECT_EQ(ticks, 987654u);
  // A command name may hold spaces and parentheses: the fields start after the last ')'.
  ASSERT_TRUE(parse_process_stat("7 (a) S (b c)) S 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 55 0 0", state, ticks));
  EXPECT_EQ(state, 'S');
  EXPECT_EQ(ticks, 55u);
  EXPECT_FALSE(parse_process_stat("", state, ticks));
  EXPECT_FALSE(parse_process_stat("7 (x) R 1 7 7 0", state, ticks));                                        // cut short
  EXPECT_FALSE(parse_process_stat("7 x R 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 55 0 0", state, ticks));     // no name
  EXPECT_FALSE(parse_process_stat("7 (x) RS 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 55 0 0", state, ticks));  // no state
  EXPECT_FALSE(parse_process_stat("7 (x) R 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5x 0 0", state, ticks));
  EXPECT_FALSE(parse_process_stat("7 (x) R 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 -5 0 0", state, ticks));
}

TEST(RunnableCensusTest, ReadsLoadavg) {
  EXPECT_EQ(runnable_tasks_in("0.32 1.99 2.97 3/123 4567\n"), 3);
  EXPECT_EQ(runnable_tasks_in("4.41 2.94 3.21 17/130 99"), 17);
  EXPECT_EQ(runnable_tasks_in(""), -1);
  EXPECT_EQ(runnable_tasks_in("0.1 0.2"), -1);
  EXPECT_EQ(runnable_tasks_in("0.1 0.2 0.3 4"), -1);
  EXPECT_EQ(runnable_tasks_in("a b c d/e f"), -1);
}

TEST(RunnableCensusTest, KnowsThisProcess) {
  const ProcessIdentity self = own_identity();
  EXPECT_EQ(self.pid, ::getpid());
  EXPECT_GT(self.start_ticks, 0u);
  EXPECT_EQ(own_identity().start_ticks, self.start_ticks);
  RunnableCensus census(std::span(&self, 1));
  EXPECT_TRUE(census.complete());
  EXPECT_EQ(census.job_runnable(), 1);  // this process, reading
}

TEST(RunnableCensusTest, NamedWronglyIsNoCensus) {
  const ProcessIdentity self = own_identity();
  const ProcessIdentity wrong[] = {{self.pid, self.start_ticks + 1},  // the pid reused, or another namespace's
                                   {self.pid, 0},
                                   {-1, self.start_ticks},
                                   {0x3ffffff0, self.start_ticks}};  // above any pid_max
  for (const ProcessIdentity& process : wrong) {
    const ProcessIdentity job[] = {self, process};
    RunnableCensus census(job);
    EXPECT_FALSE(census.complete()) << process.pid << " " << process.start_ticks;
    EXPECT_EQ(census.job_runnable(), -1);
    EXPECT_FALSE(census.only_the_job_runs());
  }
  RunnableCensus nobody({});
  EXPECT_FALSE(nobody.complete());
}

// A child that spins until it is killed: always runnable.
class BusyChild {
 public:
  BusyChild() : pid_(::fork()) {
    if (pid_ == 0) {
      volatile unsigned long turns = 0;
      for (;;) turns = turns + 1;
    }
  }
  ~BusyChild() { end(); }
  void end() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  ProcessIdentity identity() const {
    std::ifstream file("/proc/" + std::to_string(pid_) + "/stat");
    std::stringstream text;
    text << file.rdbuf();
    char state = 0;
    std::uint64_t ticks = 0;
    EXPECT_TRUE(parse_process_stat(text.str(), state, ticks));
    return {pid_, ticks};
  }

 private:
  pid_t pid_;
};

TEST(RunnableCensusTest, SeesABusyProcessOutsideTheJob) {
  BusyChild child;
  const ProcessIdentity self = own_identity();
  RunnableCensus census(std::span(&self, 1));
  ASSERT_TRUE(census.complete());
  // This process and the child both run or wait for a core: the machine counts two at
  // least, the job one.
  for (int check = 0; check < 100; ++check) EXPECT_FALSE(census.only_the_job_runs());
}

TEST(RunnableCensusTest, CountsTheJobsBusyProcesses) {
  BusyChild child;
  const ProcessIdentity job[] = {own_identity(), child.identity()};
  RunnableCensus census(job);
  ASSERT_TRUE(census.complete());
  EXPECT_EQ(census.job_runnable(), 2);
  child.end();  // reaped: its stat reads nothing now
  EXPECT_EQ(census.job_runnable(), -1);
  EXPECT_FALSE(census.only_the_job_runs());
}

}  // namespace
}  // namespace bsp::recovery
