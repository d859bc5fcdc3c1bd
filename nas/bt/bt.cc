// nas/bt/bt.cc: NPB BT on BSPlib: the implicit ADI solution of the 3-D compressible
// Navier-Stokes equations with block-tridiagonal (5x5) line solves in x, y and z, on
// NPB's multi-partition decomposition (p = q*q processes, q cells each; see adi.h for
// the superstep structure). As in NPB: one untimed time step touches everything, the
// field is reset, then `iterations` timed steps; the RMS norms of the residual and of
// the error against the exact solution are checked against the official values.
#include <cmath>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bsplib/bsp.h"
#include "nas/bt/adi.h"
#include "nas/bt/cell.h"
#include "nas/bt/constants.h"
#include "nas/bt/initial_fields.h"
#include "nas/bt/multi_partition.h"
#include "nas/bt/norms.h"
#include "nas/common/options.h"
#include "nas/common/problem_class.h"
#include "nas/common/region_timer.h"
#include "nas/common/report.h"
#include "nas/common/verification.h"

namespace {

using nas::bt::BtClass;

constexpr double kEpsilon = 1.0e-8;

// Official NPB 3.x reference values (xcrref, xceref) per class.
const nas::ClassTable<BtClass> kClasses = {
    {'S',
     {12,
      60,
      0.010,
      {1.7034283709541311e-01, 1.2975252070034097e-02, 3.2527926989486055e-02, 2.6436421275166801e-02,
       1.9211784131744430e-01},
      {4.9976913345811579e-04, 4.5195666782961927e-05, 7.3973765172921357e-05, 7.3821238632439731e-05,
       8.9269630987491446e-04}}},
    {'W',
     {24,
      200,
      0.0008,
      {0.1125590409344e+03, 0.1180007595731e+02, 0.2710329767846e+02, 0.2469174937669e+02, 0.2638427874317e+03},
      {0.4419655736008e+01, 0.4638531260002e+00, 0.1011551749967e+01, 0.9235878729944e+00, 0.1018045837718e+02}}},
    {'A',
     {64,
      200,
      0.0008,
      {1.0806346714637264e+02, 1.1319730901220813e+01, 2.5974354511582465e+01, 2.3665622544678910e+01,
       2.5278963211748344e+02},
      {4.2348416040525025e+00, 4.4390282496995698e-01, 9.6692480136345650e-01, 8.8302063039765474e-01,
       9.7379901770829278e+00}}},
    {'B',
     {102,
      200,
      0.0003,
      {1.4233597229287254e+03, 9.9330522590150238e+01, 3.5646025644535285e+02, 3.2485447959084092e+02,
       3.2707541254659363e+03},
      {5.2969847140936856e+01, 4.4632896115670668e+00, 1.3122573342210174e+01, 1.2006925323559144e+01,
       1.2459576151035986e+02}}},
    {'C',
     {162,
      200,
      0.0001,
      {0.62398116551764615e+04, 0.50793239190423964e+03, 0.15423530093013596e+04, 0.13302387929291190e+04,
       0.11604087428436455e+05},
      {0.16462008369091265e+03, 0.11497107903824313e+02, 0.41207446207461508e+02, 0.37087651059694167e+02,
       0.36211053051841265e+03}}},
};

void reset(std::vector<nas::bt::Cell>& cells, const nas::bt::Constants& k) {
  for (auto& c : cells) nas::bt::initialize(c, k);
}

int bt_main(int argc, char** argv) {
  const nas::NpbOptions options = nas::parse_npb_options(argc, argv, "bt", kClasses.letters());
  const BtClass& params = kClasses.at(options.problem_class);
  const int n = params.n;
  const std::string size = std::to_string(n) + "x" + std::to_string(n) + "x" + std::to_string(n);
  nas::print_banner("BT", options.problem_class, size);

  std::unique_ptr<nas::bt::MultiPartition> mp;
  try {
    mp = std::make_unique<nas::bt::MultiPartition>(bsp_nprocs(), bsp_pid(), n);
  } catch (const std::invalid_argument& e) {
    bsp_abort("bt: %s\n", e.what());
  }
  if (bsp_pid() == 0) {
    std::printf(" Iterations: %d    dt: %10.6f\n Multi-partition: %d x %d x %d cells, %d per process\n\n",
                params.iterations, params.dt, mp->q(), mp->q(), mp->q(), mp->q());
    std::fflush(stdout);
  }

  const nas::bt::Constants k = nas::bt::make_constants(n, params.dt);
  std::vector<nas::bt::Cell> cells;
  cells.reserve(mp->q());
  for (int c = 0; c < mp->q(); ++c) cells.emplace_back(mp->extent(c));
  for (auto& c : cells) nas::bt::exact_rhs(c, k);
  reset(cells, k);

  nas::bt::Adi adi(*mp, cells, k);
  adi.step();  // untimed: touches all code and memory
  reset(cells, k);

  nas::RegionTimer timer;
  bsp_sync();
  timer.start();
  for (int step = 1; step <= params.iterations; ++step) {
    if (bsp_pid() == 0 && (step % 20 == 0 || step == 1)) {
      std::printf(" Time step %4d\n", step);
      std::fflush(stdout);
    }
    adi.step();
  }
  timer.stop();

  // Verification: error against the exact solution, and the residual of the final u.
  adi.copy_faces_and_rhs();
  double xce[5], xcr[5];
  nas::bt::verification_norms(cells, k, xce, xcr);
  bool ok = true;
  char what[32];
  for (int m = 0; m < 5; ++m) {
    const double reference = nas::reference_value(params.xcr[m], options);
    const bool good = nas::within_relative(xcr[m], reference, kEpsilon);
    std::snprintf(what, sizeof what, "residual %d", m + 1);
    nas::print_check(what, xcr[m], reference, good);
    ok = ok && good;
  }
  for (int m = 0; m < 5; ++m) {
    const double reference = nas::reference_value(params.xce[m], options);
    const bool good = nas::within_relative(xce[m], reference, kEpsilon);
    std::snprintf(what, sizeof what, "error %d", m + 1);
    nas::print_check(what, xce[m], reference, good);
    ok = ok && good;
  }

  const double n3 = double(n) * n * n, navg = n;
  nas::BenchmarkResult result;
  result.name = "BT";
  result.problem_class = options.problem_class;
  result.size = size;
  result.iterations = params.iterations;
  result.operations = double(params.iterations) * (3478.8 * n3 - 17655.7 * navg * navg + 28023.7 * navg);
  result.operation_type = "floating point";
  result.verified = ok;
  return nas::report_results(result, timer);
}

}  // namespace

int main(int argc, char** argv) {
  bsp_begin(bsp_nprocs());
  const int status = bt_main(argc, argv);
  bsp_end();
  return status;
}
