// nas/sp/sp.cc: NPB SP (scalar pentadiagonal pseudo-application) on BSPlib. The implicit
// finite-difference solution of the 3-D compressible Navier-Stokes equations by
// Beam-Warming ADI with the Pulliam-Chaussee diagonalisation: each time step computes the
// right-hand side, then solves scalar pentadiagonal systems along x, y and z (txinvr,
// ninvr, pinvr, tzetar between them), and adds the update. The grid is split by NPB's
// multi-partition scheme (multipartition.h), so p must be a square; adi_step.h lists the
// supersteps of a step. As in NPB: one untimed step touches everything, u is reset, the
// timed region runs `iterations` steps, then the error and residual norms are checked
// against the official values.
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bsplib/bsp.h"
#include "nas/common/options.h"
#include "nas/common/region_timer.h"
#include "nas/common/report.h"
#include "nas/common/verification.h"
#include "nas/sp/adi_step.h"
#include "nas/sp/cell_fields.h"
#include "nas/sp/initial_state.h"
#include "nas/sp/line_solver.h"
#include "nas/sp/multipartition.h"
#include "nas/sp/norms.h"
#include "nas/sp/sp_constants.h"

namespace {

constexpr double kEpsilon = 1.0e-8;

int sp_main(int argc, char** argv) {
  using namespace nas::sp;
  const auto& classes = sp_classes();
  const nas::NpbOptions options = nas::parse_npb_options(argc, argv, "sp", classes.letters());
  const SpClass& params = classes.at(options.problem_class);
  const int n = params.n;
  const std::string size = std::to_string(n) + "x" + std::to_string(n) + "x" + std::to_string(n);
  nas::print_banner("SP", options.problem_class, size);

  std::unique_ptr<Multipartition> mp;
  try {
    mp = std::make_unique<Multipartition>(bsp_nprocs(), bsp_pid(), n);
  } catch (const std::invalid_argument& e) {
    bsp_abort("sp: %s\n", e.what());
  }
  if (bsp_pid() == 0) {
    std::printf(" Time steps: %d    dt: %10.6f\n Cells: %d x %d x %d (%d per process)\n\n", params.iterations,
                params.dt, mp->q(), mp->q(), mp->q(), mp->q());
    std::fflush(stdout);
  }

  const SpConstants k = make_constants(n, params.dt);
  std::vector<CellFields> cells;
  cells.reserve(mp->q());
  const std::size_t upper_doubles = mp->q() > 1 ? LineSolver::kept_upper_doubles(mp->max_cell_size()) : 0;
  for (const Cell& c : mp->cells()) cells.emplace_back(c, upper_doubles);
  for (auto& f : cells) {
    initialize_solution(k, f);
    compute_forcing(k, f);
  }
  AdiStep adi(k, *mp, cells);

  // Untimed warm-up step, then back to the initial state.
  adi.step();
  for (auto& f : cells) initialize_solution(k, f);

  nas::RegionTimer timer;
  bsp_sync();
  timer.start();
  for (int step = 1; step <= params.iterations; ++step) adi.step();
  timer.stop();

  const std::array<double, 5> xce = error_norm(k, cells);
  adi.residual();
  std::array<double, 5> xcr = rhs_norm(k, cells);
  for (double& v : xcr) v = v / k.dt;

  bool ok = true;
  const char* names[5] = {"xcr[1]", "xcr[2]", "xcr[3]", "xcr[4]", "xcr[5]"};
  const char* enames[5] = {"xce[1]", "xce[2]", "xce[3]", "xce[4]", "xce[5]"};
  for (int m = 0; m < 5; ++m) {
    const double reference = nas::reference_value(params.xcr[m], options);
    const bool good = nas::within_relative(xcr[m], reference, kEpsilon);
    nas::print_check(names[m], xcr[m], reference, good);
    ok = ok && good;
  }
  for (int m = 0; m < 5; ++m) {
    const double reference = nas::reference_value(params.xce[m], options);
    const bool good = nas::within_relative(xce[m], reference, kEpsilon);
    nas::print_check(enames[m], xce[m], reference, good);
    ok = ok && good;
  }

  nas::BenchmarkResult result;
  result.name = "SP";
  result.problem_class = options.problem_class;
  result.size = size;
  result.iterations = params.iterations;
  const double t = n;
  result.operations = (881.174 * t * t * t - 4683.91 * t * t + 11484.5 * t - 19272.4) * double(params.iterations);
  result.operation_type = "floating point";
  result.verified = ok;
  return nas::report_results(result, timer);
}

}  // namespace

int main(int argc, char** argv) {
  bsp_begin(bsp_nprocs());
  const int status = sp_main(argc, argv);
  bsp_end();
  return status;
}
