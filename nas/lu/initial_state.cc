// nas/lu/initial_state.cc: boundary values, initial guess and forcing term (see
// initial_state.h).
#include "nas/lu/initial_state.h"

#include <algorithm>

namespace nas::lu {

void set_boundary_values(LocalFields& f, const Coefficients& c) {
  for (int k = 0; k < f.nz0; ++k)
    for (int j = f.jown0(); j <= f.jown1(); ++j)
      for (int i = f.iown0(); i <= f.iown1(); ++i) {
        const int gi = f.gi(i), gj = f.gj(j);
        const bool boundary = k == 0 || k == f.nz0 - 1 || gj == 0 || gj == f.ny0 - 1 || gi == 0 || gi == f.nx0 - 1;
        if (boundary) c.exact(gi, gj, k, f.u_at(k, j, i));
      }
}

void set_initial_values(LocalFields& f, const Coefficients& c) {
  const int nz = f.nz0;
  double ue_1jk[5], ue_nx0jk[5], ue_i1k[5], ue_iny0k[5], ue_ij1[5], ue_ijnz[5];
  for (int k = 1; k <= nz - 2; ++k) {
    const double zeta = double(k) / (nz - 1);
    for (int j = f.jst; j <= f.jend; ++j) {
      const int gj = f.gj(j);
      const double eta = double(gj) / (f.ny0 - 1);
      for (int i = f.ist; i <= f.iend; ++i) {
        const int gi = f.gi(i);
        const double xi = double(gi) / (f.nx0 - 1);
        c.exact(0, gj, k, ue_1jk);
        c.exact(f.nx0 - 1, gj, k, ue_nx0jk);
        c.exact(gi, 0, k, ue_i1k);
        c.exact(gi, f.ny0 - 1, k, ue_iny0k);
        c.exact(gi, gj, 0, ue_ij1);
        c.exact(gi, gj, nz - 1, ue_ijnz);
        double* u = f.u_at(k, j, i);
        for (int m = 0; m < 5; ++m) {
          const double pxi = (1.0 - xi) * ue_1jk[m] + xi * ue_nx0jk[m];
          const double peta = (1.0 - eta) * ue_i1k[m] + eta * ue_iny0k[m];
          const double pzeta = (1.0 - zeta) * ue_ij1[m] + zeta * ue_ijnz[m];
          u[m] = pxi + peta + pzeta - pxi * peta - peta * pzeta - pzeta * pxi + pxi * peta * pzeta;
        }
      }
    }
  }
}

void compute_forcing(LocalFields& f, const Coefficients& c, FluxOperator& op) {
  // The exact solution wherever the allocated block lies inside the global grid.
  std::fill(f.rsd.begin(), f.rsd.end(), 1.0);
  for (int k = 0; k < f.nz0; ++k)
    for (int j = 0; j < f.nya; ++j)
      for (int i = 0; i < f.nxa; ++i) {
        const int gi = f.gi(i), gj = f.gj(j);
        if (gi < 0 || gi >= f.nx0 || gj < 0 || gj >= f.ny0) continue;
        c.exact(gi, gj, k, f.rsd_at(k, j, i));
      }
  op.kinetic_terms(f.rsd.data(), f.rho_i.data(), f.qs.data());
  std::fill(f.frct.begin(), f.frct.end(), 0.0);
  op.add(f.rsd.data(), f.rho_i.data(), f.qs.data(), f.frct.data());
  std::fill(f.rsd.begin(), f.rsd.end(), 0.0);
}

}  // namespace nas::lu
