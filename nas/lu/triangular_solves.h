// nas/lu/triangular_solves.h: one k-plane of SSOR's block lower (blts) and block upper
// (buts) triangular solves on a process's owned points, with the Jacobian blocks formed
// on the fly point by point (jacld / jacu fused in: each block is used once, so nothing
// is stored). The lower solve needs rsd already final at k-1 and at the i-1 / j-1
// neighbours (ghosts filled by the wavefront); the upper one at k+1, i+1, j+1.
#pragma once

#include "nas/lu/coefficients.h"
#include "nas/lu/local_fields.h"

namespace nas::lu {

// rsd(k) <- L^-1 rsd(k) over j = jst..jend, i = ist..iend (ascending).
void lower_solve_plane(LocalFields& f, const Coefficients& c, int k);
// rsd(k) <- U^-1 rsd(k) over j = jend..jst, i = iend..ist (descending).
void upper_solve_plane(LocalFields& f, const Coefficients& c, int k);

}  // namespace nas::lu
