// tests/nas/nas_test_support.cc: running NAS kernels and reading their reports.
#include "tests/nas/nas_test_support.h"

#include <algorithm>

namespace nas::testing {

bool transport_built_in(const std::string& transport) { return bsp::testing::transport_usable(kBsprun, transport); }

bsp::testing::ProgramResult run_kernel(const std::string& kernel, char problem_class, int procs,
                                       const std::string& transport, const std::vector<std::string>& extra,
                                       std::chrono::milliseconds deadline) {
  // //nas/<kernel>:<kernel>; a variant of a kernel (is_cpp) lives in the kernel's package.
  const std::string package = kernel.substr(0, kernel.find('_'));
  const std::string binary = "nas/" + package + "/" + kernel;
  std::vector<std::string> argv = {kBsprun, "-n", std::to_string(procs), "--transport=" + transport, binary};
  argv.push_back(std::string("--class=") + problem_class);
  argv.insert(argv.end(), extra.begin(), extra.end());
  return bsp::testing::run_program(argv, deadline);
}

std::string report_field(const std::string& out, const std::string& label) {
  std::size_t at = out.find("\n " + label);
  if (at == std::string::npos) return "";
  std::size_t equals = out.find('=', at);
  std::size_t end = out.find('\n', equals);
  if (equals == std::string::npos || equals > end) return "";
  std::string value = out.substr(equals + 1, end - equals - 1);
  value.erase(0, value.find_first_not_of(' '));
  value.erase(value.find_last_not_of(' ') + 1);
  return value;
}

}  // namespace nas::testing
