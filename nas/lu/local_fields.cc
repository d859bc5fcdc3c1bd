// nas/lu/local_fields.cc: allocation and index ranges of a process's fields.
#include "nas/lu/local_fields.h"

#include <algorithm>

namespace nas::lu {

LocalFields::LocalFields(const ProcessGrid& grid, int nx0_, int ny0_, int nz0_) : nx0(nx0_), ny0(ny0_), nz0(nz0_) {
  gx0 = grid.x_first();
  gy0 = grid.y_first();
  nxl = grid.x_count();
  nyl = grid.y_count();
  nxa = nxl + 2 * kGhost;
  nya = nyl + 2 * kGhost;
  ist = std::max(gx0, 1) - gx0 + kGhost;
  iend = std::min(gx0 + nxl - 1, nx0 - 2) - gx0 + kGhost;
  jst = std::max(gy0, 1) - gy0 + kGhost;
  jend = std::min(gy0 + nyl - 1, ny0 - 2) - gy0 + kGhost;
  const std::size_t points = std::size_t(nz0) * nya * nxa;
  // Ghosts outside the global grid are never read as data, but rho_i and qs are computed
  // over the whole array, so u starts at a harmless 1 everywhere.
  u.assign(5 * points, 1.0);
  rsd.assign(5 * points, 0.0);
  frct.assign(5 * points, 0.0);
  rho_i.assign(points, 1.0);
  qs.assign(points, 0.0);
}

}  // namespace nas::lu
