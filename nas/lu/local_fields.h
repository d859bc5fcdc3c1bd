// nas/lu/local_fields.h: one process's part of LU's grid: its owned block of (i, j)
// columns over all k, with two ghost layers on each side in i and j, and the fields
// stored contiguously as [k][j][i][m] (the five equations innermost, as in NPB):
// u (the solution), rsd (residual / SSOR correction), frct (forcing term), and the
// per-point 1/rho and kinetic-energy term qs that rhs precomputes for the jacobians.
// Local index = global index - first owned + kGhost.
#pragma once

#include <cstddef>
#include <vector>

#include "nas/lu/process_grid.h"

namespace nas::lu {

inline constexpr int kGhost = 2;

struct LocalFields {
  LocalFields(const ProcessGrid& grid, int nx0, int ny0, int nz0);

  int nx0, ny0, nz0;  // global grid
  int gx0, gy0;       // global index of the first owned point
  int nxl, nyl;       // owned points along i and j
  int nxa, nya;       // allocated extent along i and j (owned + 2 ghost layers each side)
  // Local index ranges (inclusive) of the points SSOR updates: owned and strictly inside
  // the global grid (global 1 .. n0-2). Empty when ist > iend.
  int ist, iend, jst, jend;
  // Local index of the first and last owned point.
  int iown0() const { return kGhost; }
  int iown1() const { return kGhost + nxl - 1; }
  int jown0() const { return kGhost; }
  int jown1() const { return kGhost + nyl - 1; }
  // Global index of local i / j.
  int gi(int i) const { return gx0 + i - kGhost; }
  int gj(int j) const { return gy0 + j - kGhost; }

  // Point index (multiply by 5 for the 5-vector fields).
  std::size_t point(int k, int j, int i) const { return (std::size_t(k) * nya + j) * nxa + i; }
  double* u_at(int k, int j, int i) { return &u[5 * point(k, j, i)]; }
  double* rsd_at(int k, int j, int i) { return &rsd[5 * point(k, j, i)]; }
  double* frct_at(int k, int j, int i) { return &frct[5 * point(k, j, i)]; }
  const double* u_at(int k, int j, int i) const { return &u[5 * point(k, j, i)]; }

  std::vector<double> u, rsd, frct;  // 5 per point
  std::vector<double> rho_i, qs;     // 1 per point
};

}  // namespace nas::lu
