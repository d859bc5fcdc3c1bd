// nas/sp/norms.cc: error and residual norms (see norms.h); local sums, then one
// all-reduce.
#include "nas/sp/norms.h"

#include <cmath>

#include "nas/common/collectives.h"

namespace nas::sp {
namespace {

std::array<double, 5> finish(const SpConstants& k, std::array<double, 5> sums) {
  nas::all_reduce_sum(sums.data(), 5);
  for (int m = 0; m < 5; ++m) {
    for (int d = 0; d < 3; ++d) sums[m] = sums[m] / double(k.n - 2);
    sums[m] = std::sqrt(sums[m]);
  }
  return sums;
}

}  // namespace

std::array<double, 5> error_norm(const SpConstants& k, const std::vector<CellFields>& cells) {
  std::array<double, 5> sums{};
  for (const auto& f : cells) {
    const Cell& c = f.cell;
    for (int lk = 0; lk < c.size[2]; ++lk)
      for (int lj = 0; lj < c.size[1]; ++lj)
        for (int li = 0; li < c.size[0]; ++li) {
          double exact[5];
          npb_exact_solution(double(c.low[0] + li) * k.dnxm1, double(c.low[1] + lj) * k.dnym1,
                             double(c.low[2] + lk) * k.dnzm1, exact);
          const double* u = f.u.data() + f.at(li, lj, lk);  // component m at u[m * cstride]
          for (int m = 0; m < 5; ++m) {
            const double add = u[m * f.cstride] - exact[m];
            sums[m] = sums[m] + add * add;
          }
        }
  }
  return finish(k, sums);
}

std::array<double, 5> rhs_norm(const SpConstants& k, const std::vector<CellFields>& cells) {
  std::array<double, 5> sums{};
  for (const auto& f : cells) {
    const LocalRange rx = interior_range(f.cell, 0, k.n), ry = interior_range(f.cell, 1, k.n),
                     rz = interior_range(f.cell, 2, k.n);
    for (int lk = rz.lo; lk <= rz.hi; ++lk)
      for (int lj = ry.lo; lj <= ry.hi; ++lj)
        for (int li = rx.lo; li <= rx.hi; ++li) {
          const std::size_t p = f.at(li, lj, lk);
          for (int m = 0; m < 5; ++m) {
            const double r = f.rhs_of(m)[p];
            sums[m] = sums[m] + r * r;
          }
        }
  }
  return finish(k, sums);
}

}  // namespace nas::sp
