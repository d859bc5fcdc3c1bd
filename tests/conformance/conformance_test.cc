// tests/conformance/conformance_test.cc: runs the BSPlib 1998 conformance programs
// (README.md lists them, one rule each) the ways a user starts a BSPlib program, and the
// programs that must fail, checking their exit status and what they print.
//
// Positive programs, each (program, transport, P, mode) one test case named
// <program>_<transport>_p<P>_<mode>, deadline 60 s, exit 0 and the line
// "conformance <program> passed" exactly once:
//   launched     bsprun -n P --transport=T prog --mode=launched          P = 1 2 3 4 8
//   direct       BSP_TRANSPORT=T prog --mode=direct --procs=P (no bsprun) P = 1 2 3 4 8
//   init         bsprun -n P --transport=T prog --mode=init, stdin "P\n"  P = 1 2 3 4 8
//   initdirect   BSP_TRANSPORT=T prog --mode=init, stdin "P\n" (no bsprun) P = 1 4
//   askfewer     bsprun -n 4 prog --ask=2 (bsp_begin asks for fewer than launched)  P = 2
//   initfewer    bsprun -n 4 prog --mode=init, stdin "2\n"                            P = 2
// over the transports tcp, udp and nic (nic is skipped, with the reason, where it cannot
// run: it needs CAP_NET_RAW). In the two "fewer" modes the two extra processes must leave
// quietly; the job still exits 0.
//
// Then the expected failures, each a test case too, deadline 20 s: mismatched collectives
// and bsp_abort (each transport, P = 2, 3 or 1, 2, 4, under bsprun and direct), bsp_begin
// asking for more processes than launched, a program that never calls bsp_begin (bsprun
// -n 1 and -n 2, exit status 0 and 3), bad arguments and misused registrations and pids
// (each transport, P = 2, under bsprun): non-zero exit, not by a signal, the message
// naming the call. Last the Oxford header rule (bsp.h includes <stdio.h>), checked by
// compiling oxford_header.c here with -Werror=implicit-function-declaration.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "tests/run_program.h"

namespace {

using bsp::testing::count_occurrences;
using bsp::testing::describe;
using bsp::testing::ProgramResult;
using bsp::testing::run_program;
using namespace std::chrono_literals;

const std::string kBsprun = "bsplib/bsprun";
const std::string kDir = "tests/conformance/";

bool usable(const std::string& transport) { return bsp::testing::transport_usable(kBsprun, transport); }

const std::vector<std::string> kTransports = {"tcp", "udp", "nic", "shm"};

// Every program that must pass (tests/conformance/programs.bzl), oxford_header last.
const std::vector<std::string> kPositive = {
#include "tests/conformance/positive_programs.inc"
};

// ---- positive programs ----------------------------------------------------------------

using Case = std::tuple<std::string, std::string, int, std::string>;  // program, transport, P, mode

ProgramResult run_mode(const std::string& program, const std::string& transport, int procs, const std::string& mode) {
  const std::string binary = kDir + program;
  const std::string n = std::to_string(procs);
  const std::string flag = "--transport=" + transport;
  const std::map<std::string, std::string> environment = {{"BSP_TRANSPORT", transport}};
  if (mode == "launched") return run_program({kBsprun, "-n", n, flag, binary, "--mode=launched"}, 60s);
  if (mode == "direct") return run_program({binary, "--mode=direct", "--procs=" + n}, 60s, "", environment);
  if (mode == "init") return run_program({kBsprun, "-n", n, flag, binary, "--mode=init"}, 60s, n + "\n");
  if (mode == "initdirect") return run_program({binary, "--mode=init"}, 60s, n + "\n", environment);
  if (mode == "askfewer") return run_program({kBsprun, "-n", "4", flag, binary, "--mode=launched", "--ask=" + n}, 60s);
  if (mode == "initfewer") return run_program({kBsprun, "-n", "4", flag, binary, "--mode=init"}, 60s, n + "\n");
  ADD_FAILURE() << "unknown mode " << mode;
  return {};
}

class Conformance : public ::testing::TestWithParam<Case> {};

TEST_P(Conformance, Passes) {
  const auto& [program, transport, procs, mode] = GetParam();
  if (!usable(transport))
    GTEST_SKIP() << "transport " << transport << " is not built in or cannot run here (nic needs CAP_NET_RAW)";
  ProgramResult result = run_mode(program, transport, procs, mode);
  EXPECT_FALSE(result.timed_out) << describe(result);
  EXPECT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_EQ(count_occurrences(result.out, "conformance " + program + " passed\n"), 1) << describe(result);
  if (program == "end_only_pid0") {
    EXPECT_EQ(count_occurrences(result.out, "after-end pid "), 1) << describe(result);
    EXPECT_EQ(count_occurrences(result.out, "after-end pid 0\n"), 1) << describe(result);
  }
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  const auto& [program, transport, procs, mode] = info.param;
  return program + "_" + transport + "_p" + std::to_string(procs) + "_" + mode;
}

std::vector<Case> matrix() {
  std::vector<Case> cases;
  for (const std::string& program : kPositive) {
    for (const std::string& transport : kTransports) {
      for (int procs : {1, 2, 3, 4, 8}) {
        for (const char* mode : {"launched", "direct", "init"}) cases.emplace_back(program, transport, procs, mode);
      }
      for (int procs : {1, 4}) cases.emplace_back(program, transport, procs, "initdirect");
      cases.emplace_back(program, transport, 2, "askfewer");
      cases.emplace_back(program, transport, 2, "initfewer");
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Rules, Conformance, ::testing::ValuesIn(matrix()), case_name);

// ---- expected failures ------------------------------------------------------------------

// A failure must stop the job by itself: within the deadline, non-zero, not by a signal.
void expect_clean_failure(const ProgramResult& result) {
  EXPECT_FALSE(result.timed_out) << describe(result);
  EXPECT_NE(result.exit_code, 0) << describe(result);
  EXPECT_LT(result.exit_code, 128) << "killed by a signal\n" << describe(result);
  EXPECT_EQ(result.err.find("killed by signal"), std::string::npos) << describe(result);
}

void expect_in_stderr(const ProgramResult& result, const std::vector<std::string>& words) {
  for (const std::string& word : words)
    EXPECT_NE(result.err.find(word), std::string::npos) << "stderr lacks \"" << word << "\"\n" << describe(result);
}

// A job of procs processes of program over transport, started by bsprun ("launched") or
// by the program's own bsp_begin ("direct").
using Start = std::tuple<std::string, int, std::string>;  // transport, P, launched | direct

ProgramResult start_job(const Start& start, const std::string& program, const std::vector<std::string>& arguments,
                        std::chrono::milliseconds deadline) {
  const auto& [transport, procs, how] = start;
  std::vector<std::string> argv;
  std::map<std::string, std::string> environment;
  if (how == "launched") {
    argv = {kBsprun, "-n", std::to_string(procs), "--transport=" + transport, kDir + program, "--mode=launched"};
  } else {
    argv = {kDir + program, "--mode=direct", "--procs=" + std::to_string(procs)};
    environment["BSP_TRANSPORT"] = transport;
  }
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  return run_program(argv, deadline, "", environment);
}

std::string start_name(const Start& start) {
  return std::get<0>(start) + "_p" + std::to_string(std::get<1>(start)) + "_" + std::get<2>(start);
}

class MismatchedCollectives : public ::testing::TestWithParam<Start> {};

// `if (bsp_pid() == 0) bsp_sync(); bsp_end();`: stops within 20 s, naming both calls.
TEST_P(MismatchedCollectives, StopsWithMessage) {
  if (!usable(std::get<0>(GetParam()))) GTEST_SKIP() << "transport " << std::get<0>(GetParam()) << " cannot run here";
  ProgramResult result = start_job(GetParam(), "fail_mismatched_sync", {}, 20s);
  expect_clean_failure(result);
  expect_in_stderr(result, {"mismatched", "bsp_sync", "bsp_end", "superstep"});
}

INSTANTIATE_TEST_SUITE_P(Failures, MismatchedCollectives,
                         ::testing::Combine(::testing::ValuesIn(kTransports), ::testing::Values(2, 3),
                                            ::testing::Values("launched", "direct")),
                         [](const ::testing::TestParamInfo<Start>& info) { return start_name(info.param); });

class Abort : public ::testing::TestWithParam<Start> {};

// The last process calls bsp_abort while the others wait in bsp_sync: message once, non-zero.
TEST_P(Abort, PrintsOnceAndStops) {
  if (!usable(std::get<0>(GetParam()))) GTEST_SKIP() << "transport " << std::get<0>(GetParam()) << " cannot run here";
  ProgramResult result = start_job(GetParam(), "fail_abort", {}, 20s);
  expect_clean_failure(result);
  const int procs = std::get<1>(GetParam());
  EXPECT_EQ(count_occurrences(result.err, "conformance fail_abort: stopped by pid " + std::to_string(procs - 1)), 1)
      << describe(result);
  EXPECT_EQ(result.out.find("passed"), std::string::npos) << describe(result);
}

INSTANTIATE_TEST_SUITE_P(Failures, Abort,
                         ::testing::Combine(::testing::ValuesIn(kTransports), ::testing::Values(1, 2, 4),
                                            ::testing::Values("launched", "direct")),
                         [](const ::testing::TestParamInfo<Start>& info) { return start_name(info.param); });

class BeginAsksForMore : public ::testing::TestWithParam<std::string> {};

// bsprun -n 2, bsp_begin(4).
TEST_P(BeginAsksForMore, Fails) {
  const std::string& transport = GetParam();
  if (!usable(transport)) GTEST_SKIP() << "transport " << transport << " cannot run here";
  ProgramResult result = run_program({kBsprun, "-n", "2", "--transport=" + transport, kDir + "pid_nprocs", "--ask=4"},
                                     20s);
  expect_clean_failure(result);
  expect_in_stderr(result, {"bsp_begin", "more processes"});
}

INSTANTIATE_TEST_SUITE_P(Failures, BeginAsksForMore, ::testing::ValuesIn(kTransports),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

using NeverBeginsCase = std::tuple<int, int>;  // processes, the program's exit status

class NeverBegins : public ::testing::TestWithParam<NeverBeginsCase> {};

// A program without bsp_begin: its own exit status; with more than one process, a note.
TEST_P(NeverBegins, KeepsItsExitStatus) {
  const auto& [procs, status] = GetParam();
  ProgramResult result = run_program(
      {kBsprun, "-n", std::to_string(procs), kDir + "never_begins", "--status=" + std::to_string(status)}, 20s);
  EXPECT_FALSE(result.timed_out) << describe(result);
  EXPECT_EQ(result.exit_code, status) << describe(result);
  if (procs == 1) {
    EXPECT_EQ(result.err, "") << describe(result);
  } else {
    expect_in_stderr(result, {"never", "bsp_begin"});
  }
}

INSTANTIATE_TEST_SUITE_P(Failures, NeverBegins, ::testing::Combine(::testing::Values(1, 2), ::testing::Values(0, 3)),
                         [](const ::testing::TestParamInfo<NeverBeginsCase>& info) {
                           return "p" + std::to_string(std::get<0>(info.param)) + "_status" +
                                  std::to_string(std::get<1>(info.param));
                         });

// A program that cannot be run: the job says which pid could not start and why, once,
// with a shell's status 127, and not that the program never called bsp_begin.
TEST(StartFailures, ProgramThatCannotRunIsNamed) {
  ProgramResult result = run_program({kBsprun, "-n", "2", "/etc/passwd/not-a-program"}, 20s);
  EXPECT_FALSE(result.timed_out) << describe(result);
  EXPECT_EQ(result.exit_code, 127) << describe(result);
  expect_in_stderr(result, {"could not start: cannot run /etc/passwd/not-a-program: Not a directory"});
  EXPECT_EQ(count_occurrences(result.err, "could not start"), 1) << describe(result);
  EXPECT_EQ(result.err.find("never joined"), std::string::npos) << describe(result);
}

// A process that entered bsp_begin and died before joining (here: a bad setting only it
// sees, through env) is named as failing in set-up, after its own message.
TEST(StartFailures, SetUpFailureIsNamed) {
  ProgramResult result = run_program(
      {kBsprun, "-n", "3", "sh", "-c",
       "if [ \"$BSP_PID\" = 1 ]; then exec env BSP_SPIN_US=bogus \"$0\"; else exec \"$0\"; fi",
       bsp::testing::absolute(kDir + "pid_nprocs")},
      20s);
  expect_clean_failure(result);
  expect_in_stderr(result, {"BSP_SPIN_US=bogus", "pid 1 failed during set-up (exited with status 1"});
  EXPECT_EQ(result.err.find("never joined"), std::string::npos) << describe(result);
  EXPECT_EQ(result.err.find("without calling bsp_begin"), std::string::npos) << describe(result);
}

// A process that never reaches bsp_begin while the others wait: the start's watchdog
// (here --start-timeout=1) stops the job naming the phase and the pid missing.
TEST(StartFailures, StartTimeoutNamesThePidsNotJoined) {
  ProgramResult result = run_program(
      {kBsprun, "-n", "3", "--start-timeout=1", "sh", "-c",
       "if [ \"$BSP_PID\" = 2 ]; then exec sleep 60; fi; exec \"$0\"", bsp::testing::absolute(kDir + "pid_nprocs")},
      40s);
  expect_clean_failure(result);
  expect_in_stderr(result, {"start timed out", "hello", "2 of 3 joined, pid 2 did not", "--start-timeout=1"});
}

struct Misuse {
  std::string program, name, call;  // the program, its --case, the call the message must name
};

void PrintTo(const Misuse& misuse, std::ostream* out) { *out << misuse.program << " --case=" << misuse.name; }

const std::vector<Misuse> kMisuses = {
    {"fail_arguments", "get_tag_null_status", "bsp_get_tag"},
    {"fail_arguments", "qsize_null", "bsp_qsize"},
    {"fail_arguments", "move_null", "bsp_move"},
    {"fail_arguments", "move_negative", "bsp_move"},
    {"fail_arguments", "tagsize_negative", "bsp_set_tagsize"},
    {"fail_arguments", "tagsize_huge", "bsp_set_tagsize"},
    {"fail_arguments", "tagsize_null", "bsp_set_tagsize"},
    {"fail_arguments", "put_null_source", "bsp_put"},
    {"fail_arguments", "get_null_destination", "bsp_get"},
    {"fail_arguments", "send_null_payload", "bsp_send"},
    {"fail_registration", "put_outside", "bsp_put"},
    {"fail_registration", "get_outside", "bsp_get"},
    {"fail_registration", "put_pid_range", "bsp_put"},
    {"fail_registration", "get_pid_range", "bsp_get"},
    {"fail_registration", "send_pid_range", "bsp_send"},
    {"fail_registration", "pop_unregistered", "bsp_pop_reg"},
    {"fail_registration", "push_sequence_differs", "bsp_push_reg"},
    {"fail_registration", "pop_sequence_differs", "bsp_pop_reg"},
    {"fail_registration", "put_before_effective", "bsp_put"},
    {"fail_registration", "put_after_pop", "bsp_put"},
    {"fail_collective_args", "pop_names_differ", "bsp_pop_reg"},
    {"fail_collective_args", "pop_most_recent_differs", "bsp_pop_reg"},
    {"fail_collective_args", "tagsize_some", "bsp_set_tagsize"},
    {"fail_collective_args", "tagsize_some_differs", "bsp_set_tagsize"},
};

using MisuseCase = std::tuple<Misuse, std::string>;  // misuse, transport

class MisuseTest : public ::testing::TestWithParam<MisuseCase> {};

// One bad call on the last of 2 processes (under bsprun): stopped, non-zero, not by a
// signal, a message naming the call (and, for argument errors, the pid).
TEST_P(MisuseTest, StopsNamingTheCall) {
  const auto& [misuse, transport] = GetParam();
  if (!usable(transport)) GTEST_SKIP() << "transport " << transport << " cannot run here";
  ProgramResult result = start_job({transport, 2, "launched"}, misuse.program, {"--case=" + misuse.name}, 20s);
  expect_clean_failure(result);
  EXPECT_EQ(result.out.find("passed"), std::string::npos) << describe(result);
  expect_in_stderr(result, {misuse.call});
  if (misuse.program == "fail_arguments") expect_in_stderr(result, {"pid"});
}

INSTANTIATE_TEST_SUITE_P(Failures, MisuseTest,
                         ::testing::Combine(::testing::ValuesIn(kMisuses), ::testing::ValuesIn(kTransports)),
                         [](const ::testing::TestParamInfo<MisuseCase>& info) {
                           return std::get<0>(info.param).name + "_" + std::get<1>(info.param);
                         });

// ---- the Oxford header ------------------------------------------------------------------

// bsp.h includes <stdio.h>: oxford_header.c (printf, no #include <stdio.h>) compiles with
// -Werror=implicit-function-declaration, as the oxford_header target would build it.
TEST(OxfordHeader, PrintfWithOnlyBspH) {
  ProgramResult result = run_program({"cc", "-std=c11", "-Wall", "-Werror=implicit-function-declaration",
                                      "-fsyntax-only", "-Ibsplib", "-I" + kDir, kDir + "oxford_header.c"},
                                     60s);
  EXPECT_FALSE(result.timed_out) << describe(result);
  EXPECT_EQ(result.exit_code, 0) << describe(result);
}

}  // namespace
