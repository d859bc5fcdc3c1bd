// tests/security/harness.h: runs the victim program (victim.cc) under bsprun while
// attackers (attack.h) work on it, and judges whether the job came through unharmed.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tests/run_program.h"
#include "tests/security/attack.h"

namespace bsp::security {

inline const std::string kBsprun = "bsplib/bsprun";
inline const std::string kVictim = "tests/security/victim";

struct JobSpec {
  std::string transport = "udp";
  int processes = 3;
  double seconds = 3;                       // the victim's supersteps go on this long
  int stagger_ms = 0;                       // process k enters bsp_begin k x this later
  std::vector<std::string> bsprun_options;  // e.g. --trace=...
  std::vector<Plan> plans;                  // one attacker each
  double hold_seconds = 15;                 // tcp_setup_*: longest hold of a connection
  int descriptor_limit = 0;                 // > 0: bsprun (and so the job) runs with RLIMIT_NOFILE this, soft and hard
  std::string segment_netns;                // nic plans on a cluster's segment (attack.h)
  std::map<int, SegmentPort> segment;
};

struct AttackedRun {
  JobSpec spec;
  bsp::testing::ProgramResult result;
  std::vector<Report> reports;  // one per plan, in order
};

// Starts one attacker per plan, runs the job (60 s deadline), stops the attackers.
AttackedRun run_attacked(const JobSpec& spec);

// What is wrong with the run, "" when nothing: exit status 0, not timed out, every
// process printed its "supersteps verified" line, the attacker's marker appears nowhere
// in the output, no abort or lost-contact message, and the job took at most
// max_seconds.
std::string harm(const AttackedRun& run, double max_seconds);

// The job's exit status, output, error and every attacker's report.
std::string explain(const AttackedRun& run);

// A directory of its own under TEST_TMPDIR (or /tmp), removed with its files by
// remove_directory().
std::string make_directory(const std::string& prefix);
void remove_directory(const std::string& path);

}  // namespace bsp::security
