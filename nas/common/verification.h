// nas/common/verification.h: checking a benchmark's results against the official NPB
// reference values, and the --wrong-verification hook that perturbs a reference so a
// test can see the UNSUCCESSFUL path.
#pragma once

#include <cstdint>

#include "nas/common/options.h"

namespace nas {

// The official reference value, or a clearly different one (relative change 1e-3, plus 1
// so that zero moves too) when the run was started with --wrong-verification.
double reference_value(double official, const NpbOptions& options);
// The same for integer references (keys, ranks, counts): official + 1 when perturbed.
std::int64_t reference_value(std::int64_t official, const NpbOptions& options);

// True when |value - reference| <= epsilon * |reference| (and value is not NaN).
bool within_relative(double value, double reference, double epsilon);

// Prints one verification line from pid 0, e.g.
//   " x sum     computed =  -3.247834652034740E+03 reference =  ... error = ... ok"
void print_check(const char* what, double value, double reference, bool ok);

}  // namespace nas
