// tests/run_program.h: runs a program (usually bsprun ...) as a subprocess in its own
// process group, feeds it stdin, captures stdout and stderr, and kills the whole group
// if it outlives a deadline, so no test can hang. Shared by every end-to-end test.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace bsp::testing {

struct ProgramResult {
  int exit_code = -1;  // exit status, or 128 + signal
  bool timed_out = false;
  std::string out;
  std::string err;
  double seconds = 0;
};

ProgramResult run_program(const std::vector<std::string>& argv,
                          std::chrono::milliseconds deadline = std::chrono::seconds(60), const std::string& input = "",
                          const std::map<std::string, std::string>& environment = {});

// The absolute path of a file (relative to the test's working directory), or the path
// itself when it does not exist: launchers that change directory need absolute paths.
std::string absolute(const std::string& path);

// Exit status, output and error of a run, for failure messages.
std::string describe(const ProgramResult& result);

// A counter summed over processes, from the "total" line `bsprun --stats` prints on
// stderr (e.g. key "retransmissions"); -1 when the line or the key is missing.
double stats_total(const ProgramResult& result, const std::string& key);

// A counter of every process, in the order of the "pid N" lines `bsprun --stats` prints
// on stderr (e.g. key "max_rss_kib"); processes whose line lacks the key are left out.
std::vector<long> stats_per_process(const ProgramResult& result, const std::string& key);

// A time bound that holds on a loaded machine (a shared CI runner, a busy login node):
// the bound an idle machine meets, or `multiple` times how long `reference` took (a clean
// run of the same shape, made by the test just before), whichever is larger. The point of
// such a bound is "ends by itself, promptly", not a benchmark. Prints the calibration.
double calibrated_bound(double idle_seconds, const ProgramResult& reference, double multiple = 6);

// How many times needle occurs in haystack.
int count_occurrences(const std::string& haystack, const std::string& needle);

// The transports this build of bsprun offers (from `bsprun --help`).
std::vector<std::string> available_transports(const std::string& bsprun);

// True when bsprun offers the transport and it can run here (nic needs CAP_NET_RAW: root).
bool transport_usable(const std::string& bsprun, const std::string& transport);

}  // namespace bsp::testing
