// nas/lu/ssor.h: LU's pseudo-time stepping: each SSOR iteration scales the residual by
// dt, runs the lower and upper block triangular sweeps (pipelined, see wavefront.h),
// updates u by rsd / (omega (2 - omega)), and recomputes the residual rsd = F(u) - frct.
// Each process updates its u and puts u's new ghost layers to its neighbours in the
// superstep of its last upper block, so an iteration is just the two sweeps' supersteps. Norms are taken as NPB does:
// the residual's at the start and after the last iteration (inorm = itmax), the correction's at the last.
#pragma once

#include "nas/common/region_timer.h"
#include "nas/lu/coefficients.h"
#include "nas/lu/flux_operator.h"
#include "nas/lu/local_fields.h"
#include "nas/lu/neighbour_exchange.h"
#include "nas/lu/wavefront.h"

namespace nas::lu {

struct SsorNorms {
  double residual[5] = {};    // rsdnm: RMS norms of the last residual
  double correction[5] = {};  // delunm: RMS norms of the last correction
  int steps = 0;              // iterations done (fewer when the residual converged)
};

class Ssor {
 public:
  Ssor(LocalFields& fields, const Coefficients& coefficients, FluxOperator& op, NeighbourExchange& exchange,
       const Wavefront& wavefront);

  // rsd <- F(u) - frct, after exchanging u's ghost layers (collective), or with the
  // ghost layers already in place.
  void compute_residual();
  void compute_residual_with_ghosts();

  // The initial residual and its norms, then `iterations` SSOR steps (the norm interval
  // is `itmax`, NPB's inorm); the steps run inside timer (start/stop) when it is given.
  // Collective.
  SsorNorms run(int iterations, int itmax, RegionTimer* timer);

 private:
  LocalFields& f_;
  const Coefficients& c_;
  FluxOperator& op_;
  NeighbourExchange& exchange_;
  const Wavefront& wavefront_;
};

}  // namespace nas::lu
