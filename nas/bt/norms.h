// nas/bt/norms.h: the two verification norms of NPB BT, collective over processes:
// the RMS of the solution's error against the exact solution over every grid point,
// and the RMS of the right-hand side over the interior points (each summed per process
// over its cells, then across processes in pid order).
#pragma once

#include <vector>

#include "nas/bt/cell.h"
#include "nas/bt/constants.h"

namespace nas::bt {

// Both norms in one reduction: error[5] and residual[5] (the residual as NPB reports
// it, i.e. divided by dt). Collective; needs compute_rhs to have run on the cells.
void verification_norms(const std::vector<Cell>& cells, const Constants& k, double error[5], double residual[5]);

}  // namespace nas::bt
