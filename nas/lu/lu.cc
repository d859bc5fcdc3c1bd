// nas/lu/lu.cc: NPB LU on BSPlib: a pseudo-time-stepping SSOR solver for the 3-D
// compressible Navier-Stokes equations (five coupled nonlinear PDEs) on an n^3 grid,
// whose every iteration is a block lower and a block upper triangular solve: the
// Gauss-Seidel wavefronts that make LU the NAS benchmark most sensitive to latency.
// The grid is split over a 2-D process grid in x and y (process_grid.h); the sweeps are
// pipelined over blocks of k-planes, one superstep per diagonal of blocks
// (wavefront.h). As in NPB: one untimed SSOR iteration warms up, the state is reset, the
// timed region runs itmax iterations, then the residual norms, the error norms and the
// surface integral are checked against the official values.
#include <sched.h>

#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>

#include "bsplib/bsp.h"
#include "nas/common/options.h"
#include "nas/common/region_timer.h"
#include "nas/common/report.h"
#include "nas/common/verification.h"
#include "nas/lu/coefficients.h"
#include "nas/lu/flux_operator.h"
#include "nas/lu/initial_state.h"
#include "nas/lu/local_fields.h"
#include "nas/lu/lu_classes.h"
#include "nas/lu/neighbour_exchange.h"
#include "nas/lu/norms.h"
#include "nas/lu/process_grid.h"
#include "nas/lu/ssor.h"
#include "nas/lu/wavefront.h"

namespace {

// CPUs this process may run on (its affinity mask): with at least one per process the
// pipeline is cut finer (wavefront.h). A job spread over hosts with fewer cores each
// than the job's processes keeps the coarse pipeline, whatever its processes per host.
int usable_cores() {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  return ::sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) : 0;
}

using namespace nas::lu;

constexpr double kEpsilon = 1.0e-08;

// Checks the eleven results against the (possibly perturbed) references, printing each.
bool verify(const LuClass& params, const nas::NpbOptions& options, const SsorNorms& norms, const double errors[5],
            double surface) {
  bool ok = true;
  char label[32];
  for (int m = 0; m < 5; ++m) {
    const double reference = nas::reference_value(params.xcr[m], options);
    const bool good = nas::within_relative(norms.residual[m], reference, kEpsilon);
    std::snprintf(label, sizeof label, "residual %d", m + 1);
    nas::print_check(label, norms.residual[m], reference, good);
    ok = ok && good;
  }
  for (int m = 0; m < 5; ++m) {
    const double reference = nas::reference_value(params.xce[m], options);
    const bool good = nas::within_relative(errors[m], reference, kEpsilon);
    std::snprintf(label, sizeof label, "error %d", m + 1);
    nas::print_check(label, errors[m], reference, good);
    ok = ok && good;
  }
  const double reference = nas::reference_value(params.xci, options);
  const bool good = nas::within_relative(surface, reference, kEpsilon);
  nas::print_check("surface", surface, reference, good);
  return ok && good;
}

int lu_main(int argc, char** argv) {
  const nas::NpbOptions options = nas::parse_npb_options(argc, argv, "lu", kLuClasses.letters(), {"kblock"});
  const LuClass& params = kLuClasses.at(options.problem_class);
  const int n = params.n;
  const std::string size = std::to_string(n) + "x" + std::to_string(n) + "x" + std::to_string(n);
  nas::print_banner("LU", options.problem_class, size);

  std::unique_ptr<ProcessGrid> grid;
  try {
    grid = std::make_unique<ProcessGrid>(bsp_nprocs(), bsp_pid(), n, n);
  } catch (const std::invalid_argument& e) {
    bsp_abort("lu: %s\n", e.what());
  }
  int planes_per_block = 0;
  try {
    planes_per_block = std::stoi(options.get("kblock", "0"));
  } catch (const std::exception&) {
    bsp_abort("lu: --kblock wants a number of k-planes per pipeline block\n");
  }

  const Coefficients coefficients = make_coefficients(n, n, n, params.dt);
  LocalFields fields(*grid, n, n, n);
  FluxOperator op(fields, coefficients);
  NeighbourExchange exchange(*grid, fields);
  const Wavefront wavefront(*grid, n, planes_per_block, usable_cores());
  if (bsp_pid() == 0) {
    std::printf(" Iterations: %d\n Process grid: %d x %d\n", params.iterations, grid->px(), grid->py());
    std::printf(" Pipeline: %d blocks of %d k-planes, %d supersteps per sweep\n\n", wavefront.blocks(),
                wavefront.planes_per_block(), wavefront.supersteps_per_sweep());
  }

  set_boundary_values(fields, coefficients);
  set_initial_values(fields, coefficients);
  compute_forcing(fields, coefficients, op);

  Ssor ssor(fields, coefficients, op, exchange, wavefront);
  ssor.run(1, params.iterations, nullptr);  // untimed warm-up touches all data
  set_boundary_values(fields, coefficients);
  set_initial_values(fields, coefficients);

  nas::RegionTimer timer;
  const SsorNorms norms = ssor.run(params.iterations, params.iterations, &timer);

  double errors[5];
  error_norms(fields, coefficients, errors);
  const double surface = surface_integral(fields, coefficients);
  const bool ok = verify(params, options, norms, errors, surface);

  nas::BenchmarkResult result;
  result.name = "LU";
  result.problem_class = options.problem_class;
  result.size = size;
  result.iterations = params.iterations;
  result.operations = lu_operation_count(n, params.iterations);
  result.operation_type = "floating point";
  result.verified = ok;
  return nas::report_results(result, timer);
}

}  // namespace

int main(int argc, char** argv) {
  bsp_begin(bsp_nprocs());
  const int status = lu_main(argc, argv);
  bsp_end();
  return status;
}
