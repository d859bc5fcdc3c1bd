// nas/lu/jacobians.h: the 5x5 blocks of LU's implicit operator at one grid point: the
// block diagonal D, and the off-diagonal block that couples a point to its neighbour
// along one direction (built from the neighbour's state). The lower triangular sweep
// uses the neighbours at i-1, j-1, k-1 with sign -dt; the upper one those at i+1, j+1,
// k+1 with sign +dt. The formulas are the NPB 3.3 ones (with 1/rho and qs precomputed by
// rhs), written once for a generic direction: `n` is the momentum component normal to
// it, `o` the two tangential ones. Blocks are stored as M[column][row] (NPB's Fortran
// layout), so row m of M times v is  sum_n M[n][m] v[n]. Header-only so that the solves
// inline them.
#pragma once

#include "nas/lu/coefficients.h"

namespace nas::lu {

using Block = double[5][5];

// The metric and diffusion coefficients of one direction.
struct DirectionMetrics {
  double t1, t2;
  double d[5];
};

inline DirectionMetrics x_metrics(const Coefficients& c) { return {c.tx1, c.tx2, {c.dx1, c.dx2, c.dx3, c.dx4, c.dx5}}; }
inline DirectionMetrics y_metrics(const Coefficients& c) { return {c.ty1, c.ty2, {c.dy1, c.dy2, c.dy3, c.dy4, c.dy5}}; }
inline DirectionMetrics z_metrics(const Coefficients& c) { return {c.tz1, c.tz2, {c.dz1, c.dz2, c.dz3, c.dz4, c.dz5}}; }

inline constexpr double kR43 = 4.0 / 3.0;
inline constexpr double kC1345 = kC1 * kC3 * kC4 * kC5;
inline constexpr double kC34 = kC3 * kC4;

// The block diagonal at a point with state w, 1/rho = rho_i.
inline void diagonal_block(const Coefficients& c, const double* w, double rho_i, Block& D) {
  constexpr double r43 = kR43, c1345 = kC1345, c34 = kC34;
  const double dt = c.dt, tx1 = c.tx1, ty1 = c.ty1, tz1 = c.tz1;
  const double tmp1 = rho_i, tmp2 = tmp1 * tmp1, tmp3 = tmp1 * tmp2;
  for (int n = 0; n < 5; ++n)
    for (int m = 0; m < 5; ++m) D[n][m] = 0.0;
  D[0][0] = 1.0 + dt * 2.0 * (tx1 * c.dx1 + ty1 * c.dy1 + tz1 * c.dz1);
  D[0][1] = -dt * 2.0 * (tx1 * r43 + ty1 + tz1) * c34 * tmp2 * w[1];
  D[1][1] = 1.0 + dt * 2.0 * c34 * tmp1 * (tx1 * r43 + ty1 + tz1) +
            dt * 2.0 * (tx1 * c.dx2 + ty1 * c.dy2 + tz1 * c.dz2);
  D[0][2] = -dt * 2.0 * (tx1 + ty1 * r43 + tz1) * c34 * tmp2 * w[2];
  D[2][2] = 1.0 + dt * 2.0 * c34 * tmp1 * (tx1 + ty1 * r43 + tz1) +
            dt * 2.0 * (tx1 * c.dx3 + ty1 * c.dy3 + tz1 * c.dz3);
  D[0][3] = -dt * 2.0 * (tx1 + ty1 + tz1 * r43) * c34 * tmp2 * w[3];
  D[3][3] = 1.0 + dt * 2.0 * c34 * tmp1 * (tx1 + ty1 + tz1 * r43) +
            dt * 2.0 * (tx1 * c.dx4 + ty1 * c.dy4 + tz1 * c.dz4);
  const double cx = tx1 * (r43 * c34 - c1345) + ty1 * (c34 - c1345) + tz1 * (c34 - c1345);
  const double cy = tx1 * (c34 - c1345) + ty1 * (r43 * c34 - c1345) + tz1 * (c34 - c1345);
  const double cz = tx1 * (c34 - c1345) + ty1 * (c34 - c1345) + tz1 * (r43 * c34 - c1345);
  D[0][4] = -dt * 2.0 *
            ((cx * (w[1] * w[1]) + cy * (w[2] * w[2]) + cz * (w[3] * w[3])) * tmp3 +
             (tx1 + ty1 + tz1) * c1345 * tmp2 * w[4]);
  D[1][4] = dt * 2.0 * tmp2 * w[1] * cx;
  D[2][4] = dt * 2.0 * tmp2 * w[2] * cy;
  D[3][4] = dt * 2.0 * tmp2 * w[3] * cz;
  D[4][4] = 1.0 + dt * 2.0 * (tx1 + ty1 + tz1) * c1345 * tmp1 + dt * 2.0 * (tx1 * c.dx5 + ty1 * c.dy5 + tz1 * c.dz5);
}

// The off-diagonal block towards a neighbour with state w, 1/rho = rho_i, kinetic term
// q, along a direction whose momentum component is N (1 = x, 2 = y, 3 = z); signed_dt
// is -dt (lower sweep) or +dt (upper sweep). N is a template argument so that every
// entry's position is a constant and the block can live in registers once inlined.
template <int N>
inline void off_diagonal_block(const Coefficients& c, const DirectionMetrics& dir, double sdt, const double* w,
                               double rho_i, double q, Block& M) {
  constexpr double r43 = kR43, c1345 = kC1345, c34 = kC34;
  constexpr double C1 = kC1, C2 = kC2;
  const double dt = c.dt, t1 = dir.t1, t2 = dir.t2;
  const double tmp1 = rho_i, tmp2 = tmp1 * tmp1, tmp3 = tmp1 * tmp2;
  constexpr int n = N;
  const double wn = w[n];
  for (int a = 0; a < 5; ++a)
    for (int b = 0; b < 5; ++b) M[a][b] = 0.0;

  // Continuity row.
  M[0][0] = -dt * t1 * dir.d[0];
  M[n][0] = sdt * t2;

  // Normal momentum row.
  M[0][n] = sdt * t2 * (-(wn * tmp1) * (wn * tmp1) + C2 * q * tmp1) - dt * t1 * (-r43 * c34 * tmp2 * wn);
  M[n][n] = sdt * t2 * ((2.0 - C2) * (wn * tmp1)) - dt * t1 * (r43 * c34 * tmp1) - dt * t1 * dir.d[n];
  M[4][n] = sdt * t2 * C2;

  // Tangential momentum rows, and their entries in the normal row.
  for (int o = 1; o <= 3; ++o) {
    if (o == n) continue;
    const double wo = w[o];
    M[o][n] = sdt * t2 * (-C2 * (wo * tmp1));
    M[0][o] = sdt * t2 * (-(wn * wo) * tmp2) - dt * t1 * (-c34 * tmp2 * wo);
    M[n][o] = sdt * t2 * (wo * tmp1);
    M[o][o] = sdt * t2 * (wn * tmp1) - dt * t1 * (c34 * tmp1) - dt * t1 * dir.d[o];
  }

  // Energy row.
  double cm[4];
  for (int m = 1; m <= 3; ++m) cm[m] = m == n ? (r43 * c34 - c1345) : (c34 - c1345);
  M[0][4] = sdt * t2 * ((C2 * 2.0 * q - C1 * w[4]) * (wn * tmp2)) -
            dt * t1 *
                (-cm[1] * tmp3 * (w[1] * w[1]) - cm[2] * tmp3 * (w[2] * w[2]) - cm[3] * tmp3 * (w[3] * w[3]) -
                 c1345 * tmp2 * w[4]);
  M[n][4] = sdt * t2 * (C1 * (w[4] * tmp1) - C2 * (q * tmp1 + wn * wn * tmp2)) -
            dt * t1 * (r43 * c34 - c1345) * tmp2 * wn;
  for (int o = 1; o <= 3; ++o) {
    if (o == n) continue;
    M[o][4] = sdt * t2 * (-C2 * (w[o] * wn) * tmp2) - dt * t1 * (c34 - c1345) * tmp2 * w[o];
  }
  M[4][4] = sdt * t2 * (C1 * (wn * tmp1)) - dt * t1 * c1345 * tmp1 - dt * t1 * dir.d[4];
}

}  // namespace nas::lu
