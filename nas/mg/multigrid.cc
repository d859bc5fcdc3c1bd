// nas/mg/multigrid.cc: the MG hierarchy and V-cycle over blocks (see multigrid.h).
#include "nas/mg/multigrid.h"

#include <algorithm>
#include <cmath>

#include "bsplib/bsp.h"
#include "nas/common/collectives.h"
#include "nas/mg/random_charges.h"

namespace nas::mg {

Multigrid::Multigrid(const MgProblem& problem, const ProcessGrid& grid)
    : problem_(problem),
      grid_(grid),
      u_storage_(problem.levels + 1),
      r_storage_(problem.levels + 1),
      u_(problem.levels + 1),
      r_(problem.levels + 1) {
  int longest_line = 0;
  for (int k = 1; k <= problem.levels; ++k) {
    const int width = problem.n >> (problem.levels - k);
    const int m1 = grid.local_points(0, width) + 2;
    const int m2 = grid.local_points(1, width) + 2;
    const int m3 = grid.local_points(2, width) + 2;
    const std::size_t points = std::size_t(m1) * m2 * m3;
    u_storage_[k].assign(points, 0.0);
    r_storage_[k].assign(points, 0.0);
    u_[k] = Grid3{u_storage_[k].data(), m1, m2, m3};
    r_[k] = Grid3{r_storage_[k].data(), m1, m2, m3};
    longest_line = std::max(longest_line, m1);
  }
  v_storage_.assign(u_[problem.levels].size(), 0.0);
  v_ = Grid3{v_storage_.data(), u_[problem.levels].m1, u_[problem.levels].m2, u_[problem.levels].m3};
  scratch_ = std::make_unique<LineScratch>(longest_line);
  const Grid3& finest = u_[problem.levels];  // the largest block in every direction
  halo_ = std::make_unique<HaloExchange>(grid, std::array<int, 3>{finest.m1, finest.m2, finest.m3});
}

Multigrid::~Multigrid() = default;

void Multigrid::initialise() {
  zero(u_[problem_.levels]);
  fill_random_charges(v_, problem_.n, grid_, *halo_);
}

void Multigrid::finest_residual() {
  const int top = problem_.levels;
  residual(u_[top], v_, r_[top], problem_.a, *scratch_);
  exchange(r_[top]);
}

void Multigrid::v_cycle() {
  const int top = problem_.levels;
  // Down: restrict the residual level by level to the coarsest grid.
  for (int k = top; k > 1; --k) {
    restrict_to_coarse(r_[k], r_[k - 1], *scratch_);
    exchange(r_[k - 1]);
  }
  // Coarsest: an approximate solve by one smoothing from zero.
  zero(u_[1]);
  smooth(r_[1], u_[1], problem_.c, *scratch_);
  exchange(u_[1]);
  // Up: prolongate the correction, form the residual, smooth.
  for (int k = 2; k < top; ++k) {
    zero(u_[k]);
    prolongate_add(u_[k - 1], u_[k], *scratch_);
    residual(u_[k], r_[k], r_[k], problem_.a, *scratch_);
    exchange(r_[k]);
    smooth(r_[k], u_[k], problem_.c, *scratch_);
    exchange(u_[k]);
  }
  prolongate_add(u_[top - 1], u_[top], *scratch_);
  finest_residual();
  smooth(r_[top], u_[top], problem_.c, *scratch_);
  exchange(u_[top]);
}

GlobalNorms Multigrid::residual_norms() {
  const LocalNorms mine = local_norms(r_[problem_.levels]);
  const double pair[2] = {mine.sum_of_squares, mine.max_abs};
  const int p = bsp_nprocs();
  std::vector<double> all(2 * std::size_t(p));
  nas::all_gather(pair, sizeof pair, all.data());  // one superstep for both norms
  double sum = 0, max_abs = 0;
  for (int q = 0; q < p; ++q) {  // the same order on every process: the same result
    sum += all[2 * q];
    max_abs = std::max(max_abs, all[2 * q + 1]);
  }
  const double points = double(problem_.n) * problem_.n * problem_.n;
  return {std::sqrt(sum / points), max_abs};
}

}  // namespace nas::mg
