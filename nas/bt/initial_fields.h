// nas/bt/initial_fields.h: the untimed set-up of a cell: the initial u (transfinite
// interpolation of the exact solution's boundary values, exact values on the boundary)
// and the forcing term that makes the exact solution a steady state of the discrete
// equations (NPB's initialize and exact_rhs), both pointwise in global coordinates.
#pragma once

#include "nas/bt/cell.h"
#include "nas/bt/constants.h"

namespace nas::bt {

void initialize(Cell& cell, const Constants& k);
void exact_rhs(Cell& cell, const Constants& k);

}  // namespace nas::bt
