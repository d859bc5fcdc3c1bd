// nas/lu/ssor.cc: the SSOR iteration (see ssor.h).
#include "nas/lu/ssor.h"

#include <cstdio>
#include <functional>

#include "bsplib/bsp.h"
#include "nas/lu/norms.h"

namespace nas::lu {

Ssor::Ssor(LocalFields& fields, const Coefficients& coefficients, FluxOperator& op, NeighbourExchange& exchange,
           const Wavefront& wavefront)
    : f_(fields), c_(coefficients), op_(op), exchange_(exchange), wavefront_(wavefront) {}

void Ssor::compute_residual() {
  exchange_.exchange_ghosts(f_.u.data());
  compute_residual_with_ghosts();
}

void Ssor::compute_residual_with_ghosts() {
  LocalFields& f = f_;
  op_.kinetic_terms(f.u.data(), f.rho_i.data(), f.qs.data());
  for (int k = 0; k < f.nz0; ++k)
    for (int j = f.jown0(); j <= f.jown1(); ++j) {
      const double* frct = f.frct_at(k, j, f.iown0());
      double* rsd = f.rsd_at(k, j, f.iown0());
      for (int n = 0; n < 5 * f.nxl; ++n) rsd[n] = -frct[n];
    }
  op_.add(f.u.data(), f.rho_i.data(), f.qs.data(), f.rsd.data());
}

SsorNorms Ssor::run(int iterations, int itmax, RegionTimer* timer) {
  LocalFields& f = f_;
  const double factor = 1.0 / (c_.omega * (2.0 - c_.omega));
  const int inorm = itmax;
  SsorNorms norms;
  // Run by the upper sweep right after this process's last block: u += factor * rsd,
  // then u's new boundary layers are put to the neighbours.
  const std::function<void()> update_u = [&] {
    for (int k = 1; k <= f.nz0 - 2; ++k)
      for (int j = f.jst; j <= f.jend; ++j) {
        double* u = f.u_at(k, j, f.ist);
        const double* v = f.rsd_at(k, j, f.ist);
        const int n = 5 * (f.iend - f.ist + 1);
        for (int q = 0; q < n; ++q) u[q] = u[q] + factor * v[q];
      }
    exchange_.post_ghosts(f.u.data());
  };
  compute_residual();
  rms_norms(f, f.rsd.data(), norms.residual);

  bsp_sync();
  if (timer) timer->start();
  for (int step = 1; step <= iterations; ++step) {
    if (bsp_pid() == 0 && iterations > 1 && (step % 20 == 0 || step == itmax || step == 1))
      std::printf(" Time step %4d\n", step);

    for (int k = 1; k <= f.nz0 - 2; ++k)
      for (int j = f.jst; j <= f.jend; ++j) {
        double* v = f.rsd_at(k, j, f.ist);
        const int n = 5 * (f.iend - f.ist + 1);
        for (int q = 0; q < n; ++q) v[q] = c_.dt * v[q];
      }

    wavefront_.lower_sweep(f, c_, exchange_);
    wavefront_.upper_sweep(f, c_, exchange_, update_u);
    exchange_.collect_ghosts(f.u.data());  // the sweep's last sync delivered them

    if (step % inorm == 0) rms_norms(f, f.rsd.data(), norms.correction);
    compute_residual_with_ghosts();
    if (step % inorm == 0 || step == itmax) rms_norms(f, f.rsd.data(), norms.residual);
    norms.steps = step;

    bool converged = true;
    for (int m = 0; m < 5; ++m) converged = converged && norms.residual[m] < kResidualTolerance;
    if (converged) {
      if (bsp_pid() == 0) std::printf("\n convergence was achieved after %4d pseudo-time steps\n", step);
      break;
    }
  }
  if (timer) timer->stop();
  return norms;
}

}  // namespace nas::lu
