// tests/holding_cases.h: which cases of tests/bsp_cases.cc must pass, shared by the tests
// that start jobs in different ways (bsprun in semantics_test, mpirun, srun), so a case
// added to bsp_cases is listed once.
#pragma once

#include <string>
#include <vector>

namespace bsp::testing {

// What must hold however the job was started: every launcher's test runs these.
inline const std::vector<std::string> kHoldingCases = {
    "put_all_to_all",    "get_before_put",  "overlapping_puts",
    "put_copies_source", "hp_variants",     "registration_order_and_pop",
    "tagsize_states",    "bsmp_all_to_all", "many_supersteps",
    "empty_supersteps",  "large_transfers", "many_small_puts",
    "zero_length",       "enquiry",         "stdin_to_pid0",
    "many_to_one"};

// kHoldingCases and the cases only semantics_test runs so far (under bsprun, on every
// transport and process count): combined and strided puts, racing puts and gets, large
// gathered transfers, supersteps in shm's cache lines mixed with framed ones, the time
// communication_seconds() counts, the ordering rules for large puts that arrive while
// their receiver waits in bsp_sync, runs of supersteps with nothing to send broken by
// one sender.
inline const std::vector<std::string> kAllHoldingCases = [] {
  std::vector<std::string> all = kHoldingCases;
  for (const char* name :
       {"combined_puts", "strided_puts", "racing_puts_and_gets", "large_gathered", "lines_and_frames",
        "communication_time", "large_put_hazards", "put_sources_reused", "quiet_and_busy_supersteps"}) {
    all.push_back(name);
  }
  return all;
}();

}  // namespace bsp::testing
