// nas/lu/initial_state.h: LU's problem set-up on a process's block: the boundary values
// of u (the exact solution on the six faces of the global grid), the initial interior
// values (trilinear blend of the face values), and the forcing term frct = F(u_exact).
#pragma once

#include "nas/lu/coefficients.h"
#include "nas/lu/flux_operator.h"
#include "nas/lu/local_fields.h"

namespace nas::lu {

// u <- exact solution at the owned points on the global boundary (setbv).
void set_boundary_values(LocalFields& f, const Coefficients& c);
// u <- trilinear interpolation of the face values at the owned interior points (setiv).
void set_initial_values(LocalFields& f, const Coefficients& c);
// frct <- F(u_exact) at the interior points (erhs). The exact solution is evaluated on
// the ghost layers too, so this needs no communication. Uses rsd, rho_i, qs as scratch.
void compute_forcing(LocalFields& f, const Coefficients& c, FluxOperator& op);

}  // namespace nas::lu
