// tests/nas/mg_ft_runner.h: what the MG and FT end-to-end tests share: running a NAS
// binary under bsprun (paths relative to the Bazel runfiles directory), knowing which
// transports this bsprun offers, and reading the fields of an NPB report.
#pragma once

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "tests/run_program.h"

namespace nas_tests {

inline const std::string kBsprun = "bsplib/bsprun";

inline bool transport_available(const std::string& transport) {
  static const std::vector<std::string> names = bsp::testing::available_transports(kBsprun);
  return std::find(names.begin(), names.end(), transport) != names.end();
}

// bsprun -n procs --transport=transport nas/<benchmark> args...
inline bsp::testing::ProgramResult run_nas(const std::string& benchmark, int procs,
                                           const std::string& transport,
                                           const std::vector<std::string>& args,
                                           std::chrono::milliseconds deadline) {
  std::vector<std::string> argv = {kBsprun, "-n", std::to_string(procs),
                                   "--transport=" + transport, "nas/" + benchmark};
  argv.insert(argv.end(), args.begin(), args.end());
  return bsp::testing::run_program(argv, deadline);
}

// The value of the report line " <label> = <value>" (trimmed), or "" when it is missing.
inline std::string report_value(const bsp::testing::ProgramResult& r, const std::string& label) {
  const auto at = r.out.find("\n " + label + " ");
  if (at == std::string::npos) return "";
  std::string line = r.out.substr(at + 1, r.out.find('\n', at + 1) - at - 1);
  const auto equals = line.find('=');
  if (equals == std::string::npos) return "";
  std::string value = line.substr(equals + 1);
  value.erase(0, value.find_first_not_of(' '));
  value.erase(value.find_last_not_of(" \r") + 1);
  return value;
}

// True when the report's verification line says exactly this (SUCCESSFUL, UNSUCCESSFUL).
inline bool reports(const bsp::testing::ProgramResult& r, const std::string& verdict) {
  return report_value(r, "Verification") == verdict;
}

}  // namespace nas_tests
