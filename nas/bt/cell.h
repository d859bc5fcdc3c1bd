// nas/bt/cell.h: the arrays of one cell of the multi-partition: the solution u, the
// right-hand side rhs and the forcing term (five components per point), and the
// quantities compute_rhs derives from u (1/rho, velocities, kinetic energy terms).
// Every array is padded by two ghost layers on each side of each axis so that stencils
// reach neighbour cells' points by plain offsets; ghosts of u come from copy_faces.
// Layout: x fastest, then y, then z; the five components of a point are adjacent.
#pragma once

#include <cstddef>
#include <vector>

#include "nas/bt/multi_partition.h"

namespace nas::bt {

constexpr int kGhost = 2;

struct Cell {
  explicit Cell(const CellExtent& e);

  CellExtent extent;
  int p0 = 0, p1 = 0, p2 = 0;     // padded sizes
  std::ptrdiff_t stride[3] = {};  // point-index offset of one step along each axis

  // Point index of local (i, j, k), each in [-2, size + 1].
  std::ptrdiff_t at(int i, int j, int k) const {
    return (std::ptrdiff_t(k + kGhost) * p1 + (j + kGhost)) * p0 + (i + kGhost);
  }

  std::vector<double> u, rhs, forcing;                // 5 per point
  std::vector<double> rho_i, us, vs, ws, qs, square;  // 1 per point
  std::vector<double> lhs_c;                          // C' blocks (25 per point) kept between sweep stages (q > 1)
};

}  // namespace nas::bt
