// nas/sp/initial_state.h: the untimed set-up of one cell: the initial solution u
// (transfinite interpolation of the exact solution's boundary values, with the exact
// solution on the six boundary faces) and the forcing term (NPB's exact_rhs: the
// discretised operator applied to the exact solution, sign changed), both computed
// point by point exactly as the NPB specification orders the arithmetic.
#pragma once

#include "nas/sp/cell_fields.h"
#include "nas/sp/sp_constants.h"

namespace nas::sp {

void initialize_solution(const SpConstants& k, CellFields& f);
void compute_forcing(const SpConstants& k, CellFields& f);

}  // namespace nas::sp
