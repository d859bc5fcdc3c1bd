// nas/cg/cg.cc: NPB CG on BSPlib: estimates the smallest eigenvalue of the NPB sparse
// symmetric positive-definite matrix by inverse power iteration, each outer iteration
// solving A z = x with 25 conjugate-gradient steps (nas/cg/distributed_cg.h) and then
// normalising x = z / ||z||; zeta = shift + 1 / (x . z) is checked against the official
// value. Rows are distributed in contiguous blocks; one untimed warm-up iteration first,
// as in NPB.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "bsplib/bsp.h"
#include "nas/cg/cg_matrix.h"
#include "nas/cg/distributed_cg.h"
#include "nas/common/collectives.h"
#include "nas/common/options.h"
#include "nas/common/problem_class.h"
#include "nas/common/randlc.h"
#include "nas/common/region_timer.h"
#include "nas/common/report.h"
#include "nas/common/verification.h"

namespace {

using nas::cg::CgShape;

struct CgClass {
  CgShape shape;
  int iterations;  // NITER
  double zeta;     // official zeta
};

constexpr double kRcond = 0.1;
constexpr double kEpsilon = 1.0e-10;  // absolute, on zeta

const nas::ClassTable<CgClass> kClasses = {
    {'S', {{1400, 7, 10.0, kRcond}, 15, 8.5971775078648}},     {'W', {{7000, 8, 12.0, kRcond}, 15, 10.362595087124}},
    {'A', {{14000, 11, 20.0, kRcond}, 15, 17.130235054029}},   {'B', {{75000, 13, 60.0, kRcond}, 75, 22.712745482631}},
    {'C', {{150000, 15, 110.0, kRcond}, 75, 28.973605592845}},
};

// One outer iteration: solve, then (one reduction superstep) x.z, z.z and the residual;
// x <- z / ||z||. Returns zeta; *rnorm gets ||x - A z||.
double power_step(nas::cg::DistributedCg& solver, const CgShape& shape, std::vector<double>& x, std::vector<double>& z,
                  double* rnorm) {
  const int m = solver.local_size();
  double sums[3] = {0.0, 0.0, solver.solve(x.data(), z.data())};
  for (int j = 0; j < m; ++j) {
    sums[0] += x[j] * z[j];
    sums[1] += z[j] * z[j];
  }
  nas::all_reduce_sum(sums, 3);
  *rnorm = std::sqrt(sums[2]);
  const double inverse_norm = 1.0 / std::sqrt(sums[1]);
  for (int j = 0; j < m; ++j) x[j] = inverse_norm * z[j];
  return shape.shift + 1.0 / sums[0];
}

int cg_main(int argc, char** argv) {
  nas::NpbOptions options = nas::parse_npb_options(argc, argv, "cg", kClasses.letters());
  const CgClass& params = kClasses.at(options.problem_class);
  const CgShape& shape = params.shape;
  const int p = bsp_nprocs(), me = bsp_pid();
  nas::print_banner("CG", options.problem_class,
                    std::to_string(shape.n) + " rows, " + std::to_string(params.iterations) + " iterations");

  double seed = nas::kNpbSeed;
  nas::randlc(&seed, nas::kNpbMultiplier);
  nas::cg::RowBlock block = nas::cg::row_block(shape.n, me, p);
  nas::cg::DistributedCg solver(shape.n, nas::cg::make_cg_matrix_rows(shape, block.first, block.last, &seed));

  const int m = solver.local_size();
  std::vector<double> x(m, 1.0), z(m, 0.0);
  double rnorm = 0.0;
  power_step(solver, shape, x, z, &rnorm);  // untimed warm-up (touches every page and path)
  std::fill(x.begin(), x.end(), 1.0);

  nas::RegionTimer timer;
  bsp_sync();
  timer.start();
  double zeta = 0.0;
  for (int it = 1; it <= params.iterations; ++it) {
    zeta = power_step(solver, shape, x, z, &rnorm);
    if (me == 0) {
      if (it == 1) std::printf("   iteration           ||r||                 zeta\n");
      std::printf("    %5d       %20.14e%20.13e\n", it, rnorm, zeta);
    }
  }
  timer.stop();

  const double reference = nas::reference_value(params.zeta, options);
  const bool verified = std::fabs(zeta - reference) <= kEpsilon;
  nas::print_check("zeta", zeta, reference, verified);

  const double nz = shape.nonzer * (shape.nonzer + 1.0);
  nas::BenchmarkResult result;
  result.name = "CG";
  result.problem_class = options.problem_class;
  result.size = std::to_string(shape.n);
  result.iterations = params.iterations;
  result.operations = 2.0 * params.iterations * shape.n * (3.0 + nz + 25.0 * (5.0 + nz) + 3.0);
  result.operation_type = "floating point";
  result.verified = verified;
  return nas::report_results(result, timer);
}

}  // namespace

int main(int argc, char** argv) {
  bsp_begin(bsp_nprocs());
  int status = cg_main(argc, argv);
  bsp_end();
  return status;
}
