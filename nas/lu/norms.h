// nas/lu/norms.h: LU's global results, each a collective reduction over processes:
// RMS norms of a 5-vector field over the interior points (l2norm), RMS norms of the
// solution error against the exact solution, and the surface integral of the pressure
// over three faces of an inner box (pintgr).
#pragma once

#include "nas/lu/coefficients.h"
#include "nas/lu/local_fields.h"

namespace nas::lu {

// sqrt( sum over interior points of v_m^2 / ((nx0-2)(ny0-2)(nz0-2)) ), m = 0..4.
void rms_norms(const LocalFields& f, const double* field, double out[5]);
// The same for u_exact - u.
void error_norms(const LocalFields& f, const Coefficients& c, double out[5]);
// NPB's surface integral `frc`. Each process contributes the pressure at the face
// points it owns; every process then sums the whole faces in the same order.
double surface_integral(const LocalFields& f, const Coefficients& c);

}  // namespace nas::lu
