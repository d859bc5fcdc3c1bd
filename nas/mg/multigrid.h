// nas/mg/multigrid.h: the distributed state of NPB MG and its operations: the grid
// hierarchy of u (solution) and r (residual) per level plus v (right-hand side) on the
// finest level, each process holding its block of every level; the V-cycle (NPB mg3P),
// the finest-level residual and the global norms. Every operation is collective.
#pragma once

#include <memory>
#include <vector>

#include "nas/mg/grid3.h"
#include "nas/mg/halo_exchange.h"
#include "nas/mg/process_grid.h"
#include "nas/mg/stencils.h"

namespace nas::mg {

struct MgProblem {
  int n;        // points per direction on the finest level (a power of two)
  int levels;   // log2(n): level 1 is 2x2x2
  double a[4];  // the operator A's coefficients
  double c[4];  // the smoother's coefficients
};

struct GlobalNorms {
  double l2;       // sqrt(sum of squares / points)
  double max_abs;  // uniform norm
};

class Multigrid {
 public:
  Multigrid(const MgProblem& problem, const ProcessGrid& grid);
  ~Multigrid();

  // u = 0, v = the random charges (NPB zran3), r stale.
  void initialise();
  // r = v - A u on the finest level, ghosts exchanged.
  void finest_residual();
  // One V-cycle (NPB mg3P): updates u from r, leaves r = v - A u before the smoothing.
  void v_cycle();
  // Norms of the finest r (one superstep).
  GlobalNorms residual_norms();

 private:
  void exchange(const Grid3& g) { halo_->exchange(g); }

  MgProblem problem_;
  const ProcessGrid& grid_;
  // Index k = level (1..levels); index 0 unused.
  std::vector<std::vector<double>> u_storage_, r_storage_;
  std::vector<double> v_storage_;
  std::vector<Grid3> u_, r_;
  Grid3 v_;
  std::unique_ptr<HaloExchange> halo_;
  std::unique_ptr<LineScratch> scratch_;
};

}  // namespace nas::mg
