// tests/nas/nas_test_support.h: runs a NAS kernel under bsprun for the NAS end-to-end
// tests (relative to the Bazel runfiles directory) and reads the report it prints.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "tests/run_program.h"

namespace nas::testing {

inline const std::string kBsprun = "bsplib/bsprun";

// True when this build's bsprun offers the transport (listed by `bsprun --help`).
bool transport_built_in(const std::string& transport);

// `bsprun -n procs --transport=transport nas/<kernel>/<kernel> --class=<problem_class> extra...`;
// kernel is the benchmark's name ("cg", "bt"), each built as //nas/<kernel>:<kernel>.
bsp::testing::ProgramResult run_kernel(const std::string& kernel, char problem_class, int procs,
                                       const std::string& transport, const std::vector<std::string>& extra = {},
                                       std::chrono::milliseconds deadline = std::chrono::seconds(120));

// The value printed after "label" and "=" on a report line ("" when there is none).
std::string report_field(const std::string& out, const std::string& label);

}  // namespace nas::testing
