// nas/bt/compute_rhs.h: NPB BT's compute_rhs on one cell: the right-hand side of the
// implicit step, rhs = dt * (forcing + flux differences + fourth-order dissipation) at
// the interior grid points of the cell (boundary points keep the forcing, zero). Needs
// the cell's ghost layers of u filled (copy_faces) where the cell has neighbours.
#pragma once

#include "nas/bt/cell.h"
#include "nas/bt/constants.h"

namespace nas::bt {

void compute_rhs(Cell& cell, const Constants& k);

}  // namespace nas::bt
