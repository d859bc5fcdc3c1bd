// nas/bt/norms.cc: NPB BT's error_norm and rhs_norm over the multi-partition cells.
#include "nas/bt/norms.h"

#include <cmath>

#include "nas/common/collectives.h"

namespace nas::bt {

void verification_norms(const std::vector<Cell>& cells, const Constants& k, double error[5], double residual[5]) {
  const int n = k.n;
  double sums[10] = {};
  for (const Cell& c : cells) {
    const CellExtent& e = c.extent;
    for (int kk = 0; kk < e.size[2]; ++kk) {
      const int gk = e.start[2] + kk;
      const double zeta = double(gk) * k.dnm1[2];
      for (int j = 0; j < e.size[1]; ++j) {
        const int gj = e.start[1] + j;
        const double eta = double(gj) * k.dnm1[1];
        for (int i = 0; i < e.size[0]; ++i) {
          const int gi = e.start[0] + i;
          const double xi = double(gi) * k.dnm1[0];
          double exact[5];
          npb_exact_solution(xi, eta, zeta, exact);
          const double* u = &c.u[5 * c.at(i, j, kk)];
          for (int m = 0; m < 5; ++m) {
            const double add = u[m] - exact[m];
            sums[m] += add * add;
          }
          const bool inside = gi >= 1 && gi <= n - 2 && gj >= 1 && gj <= n - 2 && gk >= 1 && gk <= n - 2;
          if (inside) {
            const double* r = &c.rhs[5 * c.at(i, j, kk)];
            for (int m = 0; m < 5; ++m) sums[5 + m] += r[m] * r[m];
          }
        }
      }
    }
  }
  nas::all_reduce_sum(sums, 10);
  for (int m = 0; m < 10; ++m) {
    double v = sums[m];
    for (int d = 0; d < 3; ++d) v = v / double(n - 2);
    sums[m] = std::sqrt(v);
  }
  for (int m = 0; m < 5; ++m) {
    error[m] = sums[m];
    residual[m] = sums[5 + m] / k.dt;
  }
}

}  // namespace nas::bt
