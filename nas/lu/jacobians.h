// nas/lu/jacobians.h: the 5x5 blocks of LU's implicit operator at one grid point: the
// block diagonal D, and the off-diagonal block that couples a point to its neighbour
// along one direction (built from the neighbour's state). The lower triangular sweep
// uses the neighbours at i-1, j-1, k-1 with sign -dt; the upper one those at i+1, j+1,
// k+1 with sign +dt. Blocks are stored as M[column][row] (NPB's Fortran layout), so
// row m of M times v is  sum_n M[n][m] v[n].
#pragma once

#include "nas/lu/coefficients.h"

namespace nas::lu {

using Block = double[5][5];

// The metric and diffusion coefficients of one direction, and its momentum component.
struct DirectionMetrics {
  int normal;  // 1 (x), 2 (y) or 3 (z)
  double t1, t2;
  double d[5];
};

inline DirectionMetrics x_metrics(const Coefficients& c) {
  return {1, c.tx1, c.tx2, {c.dx1, c.dx2, c.dx3, c.dx4, c.dx5}};
}
inline DirectionMetrics y_metrics(const Coefficients& c) {
  return {2, c.ty1, c.ty2, {c.dy1, c.dy2, c.dy3, c.dy4, c.dy5}};
}
inline DirectionMetrics z_metrics(const Coefficients& c) {
  return {3, c.tz1, c.tz2, {c.dz1, c.dz2, c.dz3, c.dz4, c.dz5}};
}

// The block diagonal at a point with state w, 1/rho = rho_i.
void diagonal_block(const Coefficients& c, const double* w, double rho_i, Block& out);

// The off-diagonal block towards a neighbour with state w, 1/rho = rho_i, kinetic term
// qs, along direction dir; signed_dt is -dt (lower sweep) or +dt (upper sweep).
void off_diagonal_block(const Coefficients& c, const DirectionMetrics& dir, double signed_dt,
                        const double* w, double rho_i, double qs, Block& out);

}  // namespace nas::lu
