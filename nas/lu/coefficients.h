// nas/lu/coefficients.h: LU's constants: the gas constants c1..c5, the SSOR relaxation
// factor, the grid metrics (tx1..tz3), the artificial-dissipation coefficients, and the
// function that evaluates NPB's exact solution (nas/common/npb_exact_solution.h, shared
// with BT and SP) at a global grid point.
#pragma once

#include "nas/common/npb_exact_solution.h"

namespace nas::lu {

inline constexpr double kC1 = kGasC1, kC2 = kGasC2, kC3 = kGasC3, kC4 = kGasC4, kC5 = kGasC5;
inline constexpr double kOmega = 1.2;                  // SSOR over-relaxation factor
inline constexpr double kResidualTolerance = 1.0e-08;  // per equation, stops SSOR early

struct Coefficients {
  int nx0 = 0, ny0 = 0, nz0 = 0;  // global grid
  double dt = 0, omega = kOmega;
  double dxi = 0, deta = 0, dzeta = 0;
  double tx1 = 0, tx2 = 0, tx3 = 0, ty1 = 0, ty2 = 0, ty3 = 0, tz1 = 0, tz2 = 0, tz3 = 0;
  double dx1 = 0, dx2 = 0, dx3 = 0, dx4 = 0, dx5 = 0;
  double dy1 = 0, dy2 = 0, dy3 = 0, dy4 = 0, dy5 = 0;
  double dz1 = 0, dz2 = 0, dz3 = 0, dz4 = 0, dz5 = 0;
  double dssp = 0;  // fourth-difference dissipation

  // The exact solution's five components at global point (gi, gj, gk), 0-based.
  void exact(int gi, int gj, int gk, double out[5]) const;
};

Coefficients make_coefficients(int nx0, int ny0, int nz0, double dt);

}  // namespace nas::lu
