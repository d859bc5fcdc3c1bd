// nas/sp/cell_fields.h: the arrays one process keeps for one cell of the multi-partition:
// the solution u and the forcing term (one array per component), the
// right-hand side (one array per component, so the y and z line solves find a row of
// lanes contiguous), the derived fields of compute_rhs (1/rho, velocities, kinetic
// energy, speed of sound), and the eliminated upper diagonals kept between the forward
// and backward stages of a line sweep. Arrays cover the cell plus two ghost layers on every side (the
// fourth-order dissipation reaches two points across a cell face); points are stored with
// x fastest, then y, then z.
#pragma once

#include <array>
#include <cstddef>
#include <vector>

#include "nas/sp/multipartition.h"

namespace nas::sp {

constexpr int kGhost = 2;

struct CellFields {
  // upper_doubles: the size of `upper` (none needed unless lines cross several cells).
  CellFields(const Cell& cell, std::size_t upper_doubles);

  Cell cell;
  int ni, nj, nk;  // array extents with ghosts: size + 2 * kGhost
  std::size_t points;
  // Distance between two components of a point in u, forcing and rhs: points plus a pad
  // of 72 doubles, so that the five components of one point never sit at the same
  // offset modulo 4 KiB (points * 8 is a multiple of 4096 for class W at p = 1, 40^3
  // points with ghosts, and the z pass of compute_rhs, reading 25 streams of u, then
  // kept evicting its own lines).
  std::size_t cstride;

  // Linear point index of local coordinates (i, j, k), each from -kGhost to size-1+kGhost.
  std::size_t at(int i, int j, int k) const {
    return (std::size_t(k + kGhost) * nj + (j + kGhost)) * ni + (i + kGhost);
  }
  // Distance between neighbouring points along an axis.
  std::size_t stride(int axis) const { return axis == 0 ? 1 : axis == 1 ? std::size_t(ni) : std::size_t(ni) * nj; }

  // Component m of point p at u[m * cstride + p]: compute_rhs's stencils read one
  // component along a line, contiguous along x. The forcing term the same way once
  // compute_forcing is done (it builds the term with the 5 components together).
  std::vector<double> u, forcing;
  std::vector<double> rhs;  // component m of point p at rhs[m * cstride + p]
  double* rhs_of(int m) { return rhs.data() + std::size_t(m) * cstride; }
  const double* rhs_of(int m) const { return rhs.data() + std::size_t(m) * cstride; }
  std::vector<double> rho_i, us, vs, ws, square, qs, speed, ainv;  // 1 per point
  // The eliminated upper diagonals (d, e) of the three scalar systems, kept from the
  // forward to the backward stage of a sweep, laid out as the line solver writes them.
  std::vector<double> upper;
};

// Global grid index range [lo, hi] of a cell's points along one axis that are interior
// to the whole grid (boundary points, index 0 and n-1, are excluded), in local indices.
struct LocalRange {
  int lo, hi;
};
LocalRange interior_range(const Cell& cell, int axis, int n);

}  // namespace nas::sp
