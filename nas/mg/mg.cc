// nas/mg/mg.cc: NPB MG on BSPlib: V-cycle multigrid for the 3-D Poisson problem
// A u = v on a periodic n^3 grid, v = +1 at ten points and -1 at ten others. The grid
// hierarchy is split into 3-D blocks, one per process on every level (process_grid.h);
// ghost faces are exchanged by puts, one superstep per split direction (halo_exchange.h).
// As in NPB: one untimed V-cycle warms up, the problem is reset, then the timed region
// runs the initial residual and its norms, then `iterations` V-cycles, each followed by
// a residual, and the L2 norm of the final residual is checked against the official value.
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>

#include "bsplib/bsp.h"
#include "nas/common/options.h"
#include "nas/common/problem_class.h"
#include "nas/common/region_timer.h"
#include "nas/common/report.h"
#include "nas/common/verification.h"
#include "nas/mg/multigrid.h"
#include "nas/mg/process_grid.h"

namespace {

constexpr double kEpsilon = 1.0e-8;
constexpr double kOperator[4] = {-8.0 / 3.0, 0.0, 1.0 / 6.0, 1.0 / 12.0};
constexpr double kSmootherA[4] = {-3.0 / 8.0, +1.0 / 32.0, -1.0 / 64.0, 0.0};   // S, W, A
constexpr double kSmootherB[4] = {-3.0 / 17.0, +1.0 / 33.0, -1.0 / 61.0, 0.0};  // B, C

struct MgClass {
  int n;  // grid points per direction
  int iterations;
  bool smoother_b;      // NPB's S(b) smoother instead of S(a)
  double l2_reference;  // official L2 norm of the final residual
};

const nas::ClassTable<MgClass> kClasses = {
    {'S', {32, 4, false, 0.5307707005734e-04}},  {'W', {128, 4, false, 0.6467329375339e-05}},
    {'A', {256, 4, false, 0.2433365309069e-05}}, {'B', {256, 20, true, 0.1800564401355e-05}},
    {'C', {512, 20, true, 0.5706732285740e-06}},
};

nas::mg::MgProblem problem_for(const MgClass& c) {
  nas::mg::MgProblem problem{};
  problem.n = c.n;
  while ((1 << problem.levels) < c.n) ++problem.levels;
  const double* smoother = c.smoother_b ? kSmootherB : kSmootherA;
  for (int i = 0; i < 4; ++i) {
    problem.a[i] = kOperator[i];
    problem.c[i] = smoother[i];
  }
  return problem;
}

int mg_main(int argc, char** argv) {
  const nas::NpbOptions options = nas::parse_npb_options(argc, argv, "mg", kClasses.letters());
  const MgClass& params = kClasses.at(options.problem_class);
  const nas::mg::MgProblem problem = problem_for(params);
  const std::string size = std::to_string(params.n) + "x" + std::to_string(params.n) + "x" + std::to_string(params.n);
  nas::print_banner("MG", options.problem_class, size);

  const int coarsest_points = 2;  // level 1 is 2x2x2
  std::unique_ptr<nas::mg::ProcessGrid> grid;
  try {
    grid = std::make_unique<nas::mg::ProcessGrid>(bsp_nprocs(), bsp_pid(), coarsest_points);
  } catch (const std::invalid_argument& e) {
    bsp_abort("mg: %s\n", e.what());
  }
  if (bsp_pid() == 0) {
    std::printf(" Iterations: %d\n Process grid: %d x %d x %d\n\n", params.iterations, grid->extent(0), grid->extent(1),
                grid->extent(2));
  }

  nas::mg::Multigrid mg(problem, *grid);
  // Untimed warm-up: one V-cycle touches every level's memory.
  mg.initialise();
  mg.finest_residual();
  mg.v_cycle();
  mg.finest_residual();
  mg.initialise();

  nas::RegionTimer timer;
  bsp_sync();
  timer.start();
  mg.finest_residual();
  mg.residual_norms();  // NPB times the initial norm too (its value is not reported)
  for (int it = 1; it <= params.iterations; ++it) {
    mg.v_cycle();
    mg.finest_residual();
  }
  const nas::mg::GlobalNorms norms = mg.residual_norms();
  timer.stop();

  const double reference = nas::reference_value(params.l2_reference, options);
  const bool ok = nas::within_relative(norms.l2, reference, kEpsilon);
  nas::print_check("L2 norm", norms.l2, reference, ok);

  nas::BenchmarkResult result;
  result.name = "MG";
  result.problem_class = options.problem_class;
  result.size = size;
  result.iterations = params.iterations;
  result.operations = 58.0 * params.iterations * double(params.n) * params.n * params.n;
  result.operation_type = "floating point";
  result.verified = ok;
  return nas::report_results(result, timer);
}

}  // namespace

int main(int argc, char** argv) {
  bsp_begin(bsp_nprocs());
  const int status = mg_main(argc, argv);
  bsp_end();
  return status;
}
