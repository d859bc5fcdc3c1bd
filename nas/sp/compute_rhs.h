// nas/sp/compute_rhs.h: NPB SP's compute_rhs on one cell: the derived fields (1/rho, the
// velocities, kinetic energy, q, speed of sound and its inverse) over the cell and one
// ghost layer towards neighbouring cells, then rhs = dt * (forcing + flux differences +
// fourth-order dissipation in x, y and z) at every point interior to the grid (0 on the
// grid boundary). The cell's u
// ghosts must be current (face_exchange.h). With apply_txinvr the point-wise txinvr
// product follows at once, while the point is in cache (what the ADI step wants; the
// verification's residual wants the plain rhs).
#pragma once

#include "nas/sp/cell_fields.h"
#include "nas/sp/sp_constants.h"

namespace nas::sp {

void compute_rhs(const SpConstants& k, CellFields& f, bool apply_txinvr);

}  // namespace nas::sp
