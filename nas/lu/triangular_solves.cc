// nas/lu/triangular_solves.cc: the per-plane block triangular solves (see
// triangular_solves.h).
//
// The blocks are sparse: an off-diagonal block along direction n couples row 0 only to
// columns 0 and n, a tangential momentum row o to columns 0, n and o, and rows n and 4
// to everything; the diagonal block has row 0 = (D00, 0, ...), rows 1..3 nonzero only
// in column 0 and on the diagonal, row 4 full. NPB multiplies and eliminates the full
// 5x5 blocks; every operation skipped here is of the form x - y * 0 or x + y * 0, which
// leaves x unchanged exactly, so the results are NPB's while doing about half the flops.
#include "nas/lu/triangular_solves.h"

#include "nas/lu/jacobians.h"

namespace nas::lu {
namespace {

// True when entry (column col, row row) of an off-diagonal block along direction N can
// be nonzero.
template <int N>
constexpr bool coupled(int col, int row) {
  if (row == 0) return col == 0 || col == N;
  if (row == N || row == 4) return true;
  return col == 0 || col == N || col == row;
}

// Solves D x = rhs for the diagonal block's structure, in the order of NPB's Gaussian
// elimination without pivoting restricted to its nonzero updates; rhs is overwritten.
inline void solve_diagonal(const Block& D, double* rhs, double* x) {
  const double inv0 = 1.0 / D[0][0];
  for (int r = 1; r < 5; ++r) rhs[r] = rhs[r] - rhs[0] * (inv0 * D[0][r]);
  for (int p = 1; p < 4; ++p) rhs[4] = rhs[4] - rhs[p] * ((1.0 / D[p][p]) * D[p][4]);
  for (int r = 4; r >= 0; --r) x[r] = rhs[r] / D[r][r];
}

}  // namespace

void lower_solve_plane(LocalFields& f, const Coefficients& c, int k) {
  const DirectionMetrics xm = x_metrics(c), ym = y_metrics(c), zm = z_metrics(c);
  const double omega = c.omega, sdt = -c.dt;
  const double* u = f.u.data();
  const double* rho = f.rho_i.data();
  const double* qs = f.qs.data();
  double* rsd = f.rsd.data();
  for (int j = f.jst; j <= f.jend; ++j) {
    for (int i = f.ist; i <= f.iend; ++i) {
      Block A, B, C, D;
      double tv[5];
      const std::size_t p = f.point(k, j, i);
      const std::size_t pk = f.point(k - 1, j, i), pj = f.point(k, j - 1, i), pi = f.point(k, j, i - 1);
      off_diagonal_block<3>(c, zm, sdt, u + 5 * pk, rho[pk], qs[pk], A);
      off_diagonal_block<2>(c, ym, sdt, u + 5 * pj, rho[pj], qs[pj], B);
      off_diagonal_block<1>(c, xm, sdt, u + 5 * pi, rho[pi], qs[pi], C);
      diagonal_block(c, u + 5 * p, rho[p], D);
      double* v = rsd + 5 * p;
      const double* vk = rsd + 5 * pk;
      const double* vj = rsd + 5 * pj;
      const double* vi = rsd + 5 * pi;
#pragma GCC unroll 5
      for (int m = 0; m < 5; ++m) {
        double s = 0.0;
#pragma GCC unroll 5
        for (int n = 0; n < 5; ++n)
          if (coupled<3>(n, m)) s = s + A[n][m] * vk[n];
        v[m] = v[m] - omega * s;
      }
#pragma GCC unroll 5
      for (int m = 0; m < 5; ++m) {
        double s = 0.0;
#pragma GCC unroll 5
        for (int n = 0; n < 5; ++n) {
          if (coupled<2>(n, m)) s = s + B[n][m] * vj[n];
          if (coupled<1>(n, m)) s = s + C[n][m] * vi[n];
        }
        tv[m] = v[m] - omega * s;
      }
      solve_diagonal(D, tv, v);
    }
  }
}

void upper_solve_plane(LocalFields& f, const Coefficients& c, int k) {
  const DirectionMetrics xm = x_metrics(c), ym = y_metrics(c), zm = z_metrics(c);
  const double omega = c.omega, sdt = c.dt;
  const double* u = f.u.data();
  const double* rho = f.rho_i.data();
  const double* qs = f.qs.data();
  double* rsd = f.rsd.data();
  for (int j = f.jend; j >= f.jst; --j) {
    for (int i = f.iend; i >= f.ist; --i) {
      Block A, B, C, D;
      double tv[5], x[5];
      const std::size_t p = f.point(k, j, i);
      const std::size_t pk = f.point(k + 1, j, i), pj = f.point(k, j + 1, i), pi = f.point(k, j, i + 1);
      off_diagonal_block<1>(c, xm, sdt, u + 5 * pi, rho[pi], qs[pi], A);
      off_diagonal_block<2>(c, ym, sdt, u + 5 * pj, rho[pj], qs[pj], B);
      off_diagonal_block<3>(c, zm, sdt, u + 5 * pk, rho[pk], qs[pk], C);
      diagonal_block(c, u + 5 * p, rho[p], D);
      double* v = rsd + 5 * p;
      const double* vk = rsd + 5 * pk;
      const double* vj = rsd + 5 * pj;
      const double* vi = rsd + 5 * pi;
#pragma GCC unroll 5
      for (int m = 0; m < 5; ++m) {
        double s = 0.0;
#pragma GCC unroll 5
        for (int n = 0; n < 5; ++n)
          if (coupled<3>(n, m)) s = s + C[n][m] * vk[n];
        tv[m] = omega * s;
      }
#pragma GCC unroll 5
      for (int m = 0; m < 5; ++m) {
        double s = 0.0;
#pragma GCC unroll 5
        for (int n = 0; n < 5; ++n) {
          if (coupled<2>(n, m)) s = s + B[n][m] * vj[n];
          if (coupled<1>(n, m)) s = s + A[n][m] * vi[n];
        }
        tv[m] = tv[m] + omega * s;
      }
      solve_diagonal(D, tv, x);
      for (int m = 0; m < 5; ++m) v[m] = v[m] - x[m];
    }
  }
}

}  // namespace nas::lu
