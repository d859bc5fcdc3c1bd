// nas/lu/flux_operator.h: LU's steady-state spatial operator F (the right-hand side):
// central differences of the inviscid and viscous fluxes of the 3-D compressible
// Navier-Stokes equations in xi, eta and zeta, plus fourth-difference artificial
// dissipation (one-sided near the boundaries). rhs is  rsd = F(u) - frct  and the
// forcing term is  frct = F(u_exact), so both use this one operator.
#pragma once

#include <vector>

#include "nas/lu/coefficients.h"
#include "nas/lu/local_fields.h"

namespace nas::lu {

class FluxOperator {
 public:
  FluxOperator(const LocalFields& fields, const Coefficients& coefficients);

  // rho_i = 1 / field[0] and qs = (field[1]^2 + field[2]^2 + field[3]^2) / (2 field[0])
  // at every allocated point (ghost values must be finite).
  void kinetic_terms(const double* field, double* rho_i, double* qs) const;

  // out += F(field) at the points SSOR updates (i in ist..iend, j in jst..jend,
  // k in 1..nz0-2). field's ghost layers (two deep in i and j) must hold the
  // neighbours' values; rho_i and qs as from kinetic_terms.
  void add(const double* field, const double* rho_i, const double* qs, double* out);

 private:
  struct Direction;  // the coefficients of one direction
  // One line of points: gathers, applies the 1-D operator along it, scatters back.
  template <int N>  // N: the momentum component along the line (1 = x, 2 = y, 3 = z)
  void line(const Direction& dir, const double* field, const double* rho_i, const double* qs, double* out,
            std::size_t first_point, std::size_t stride, int count, int lo, int hi, int global_first,
            int global_points);

  const LocalFields& f_;
  const Coefficients& c_;
  // Line workspace, sized for the longest line (no allocation while computing).
  std::vector<double> u_, rho_, q_, out_, flux_;
};

}  // namespace nas::lu
