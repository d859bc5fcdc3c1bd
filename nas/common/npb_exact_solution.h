// nas/common/npb_exact_solution.h: what NPB's three pseudo-applications (BT, LU, SP) take
// alike from the specification: the gas constants c1..c5 and the prescribed exact solution,
// a polynomial of degree four per equation in (xi, eta, zeta) in [0,1]^3. Each application
// builds its boundary values, initial field, forcing term and error norm from it, so one
// table here keeps the three verifying against the same problem.
#pragma once

namespace nas {

inline constexpr double kGasC1 = 1.4, kGasC2 = 0.4, kGasC3 = 0.1, kGasC4 = 1.0, kGasC5 = 1.4;

// NPB's ce table, one row per equation, terms in the order: constant, xi, eta, zeta,
// xi^2, eta^2, zeta^2, xi^3, eta^3, zeta^3, xi^4, eta^4, zeta^4.
inline constexpr double kExactSolutionTerms[5][13] = {
    {2.0, 0.0, 0.0, 4.0, 5.0, 3.0, 0.5, 0.02, 0.01, 0.03, 0.5, 0.4, 0.3},
    {1.0, 0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 0.01, 0.03, 0.02, 0.4, 0.3, 0.5},
    {2.0, 2.0, 0.0, 0.0, 0.0, 2.0, 3.0, 0.04, 0.03, 0.05, 0.3, 0.5, 0.4},
    {2.0, 2.0, 0.0, 0.0, 0.0, 2.0, 3.0, 0.03, 0.05, 0.04, 0.2, 0.1, 0.3},
    {5.0, 4.0, 3.0, 2.0, 0.1, 0.4, 0.3, 0.05, 0.04, 0.03, 0.1, 0.3, 0.2},
};

// The exact solution's five components at (xi, eta, zeta): Horner form per coordinate,
// summed in the order xi, eta, zeta as NPB's exact_solution does (the verification
// values were computed with this rounding).
inline void npb_exact_solution(double xi, double eta, double zeta, double out[5]) {
  for (int m = 0; m < 5; ++m) {
    const double* ce = kExactSolutionTerms[m];
    out[m] = ce[0] + xi * (ce[1] + xi * (ce[4] + xi * (ce[7] + xi * ce[10]))) +
             eta * (ce[2] + eta * (ce[5] + eta * (ce[8] + eta * ce[11]))) +
             zeta * (ce[3] + zeta * (ce[6] + zeta * (ce[9] + zeta * ce[12])));
  }
}

}  // namespace nas
