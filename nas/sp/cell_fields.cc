// nas/sp/cell_fields.cc: allocation of one cell's arrays (see cell_fields.h).
#include "nas/sp/cell_fields.h"

#include <algorithm>

namespace nas::sp {

CellFields::CellFields(const Cell& c, std::size_t upper_doubles)
    : cell(c),
      ni(c.size[0] + 2 * kGhost),
      nj(c.size[1] + 2 * kGhost),
      nk(c.size[2] + 2 * kGhost),
      points(std::size_t(ni) * nj * nk),
      cstride(points + 72) {
  // Points no one writes (ghost edges and corners, ghosts beyond the grid boundary) hold a
  // harmless state, so the derived fields computed over whole boxes stay finite.
  u.assign(5 * cstride, 0.0);
  for (std::size_t p = 0; p < points; ++p) u[p] = u[4 * cstride + p] = 1.0;
  rhs.assign(5 * cstride, 0.0);
  forcing.assign(5 * points, 0.0);  // compute_forcing leaves it 5 * cstride, by component
  for (auto* v : {&rho_i, &us, &vs, &ws, &square, &qs, &speed, &ainv}) v->assign(points, 0.0);
  upper.assign(upper_doubles, 0.0);
}

LocalRange interior_range(const Cell& cell, int axis, int n) {
  const int lo = std::max(0, 1 - cell.low[axis]);
  const int hi = std::min(cell.size[axis] - 1, n - 2 - cell.low[axis]);
  return {lo, hi};
}

}  // namespace nas::sp
