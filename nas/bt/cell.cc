// nas/bt/cell.cc: allocation of a cell's padded arrays (u starts at 1 everywhere so
// that ghost corners, which no stencil reads, never hold a zero density).
#include "nas/bt/cell.h"

namespace nas::bt {

Cell::Cell(const CellExtent& e) : extent(e) {
  p0 = e.size[0] + 2 * kGhost;
  p1 = e.size[1] + 2 * kGhost;
  p2 = e.size[2] + 2 * kGhost;
  stride[0] = 1;
  stride[1] = p0;
  stride[2] = std::ptrdiff_t(p0) * p1;
  const std::size_t points = std::size_t(p0) * p1 * p2;
  u.assign(5 * points, 1.0);
  rhs.assign(5 * points, 0.0);
  forcing.assign(5 * points, 0.0);
  for (auto* v : {&rho_i, &us, &vs, &ws, &qs, &square}) v->assign(points, 1.0);
}

}  // namespace nas::bt
