// nas/sp/norms.h: SP's verification quantities, collective over all processes: the RMS
// norm of the solution error (u against the exact solution at every grid point) and the
// RMS norm of the residual (rhs at the grid-interior points), per component, each
// normalised as NPB does by (n-2)^3.
#pragma once

#include <array>
#include <vector>

#include "nas/sp/cell_fields.h"
#include "nas/sp/sp_constants.h"

namespace nas::sp {

std::array<double, 5> error_norm(const SpConstants& k, const std::vector<CellFields>& cells);
std::array<double, 5> rhs_norm(const SpConstants& k, const std::vector<CellFields>& cells);

}  // namespace nas::sp
