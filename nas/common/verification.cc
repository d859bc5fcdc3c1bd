// nas/common/verification.cc: reference values and relative-error checks.
#include "nas/common/verification.h"

#include <cmath>
#include <cstdio>

#include "bsplib/bsp.h"

namespace nas {

double reference_value(double official, const NpbOptions& options) {
  return options.wrong_verification ? official * (1.0 + 1e-3) + 1.0 : official;
}

std::int64_t reference_value(std::int64_t official, const NpbOptions& options) {
  return options.wrong_verification ? official + 1 : official;
}

bool within_relative(double value, double reference, double epsilon) {
  if (std::isnan(value)) return false;
  double error = reference == 0.0 ? std::fabs(value) : std::fabs((value - reference) / reference);
  return error <= epsilon;
}

void print_check(const char* what, double value, double reference, bool ok) {
  if (bsp_pid() != 0) return;
  double error = reference == 0.0 ? std::fabs(value) : std::fabs((value - reference) / reference);
  std::printf(" %-12s computed = %22.15E  reference = %22.15E  error = %9.2E  %s\n", what, value, reference, error,
              ok ? "ok" : "FAILED");
}

}  // namespace nas
