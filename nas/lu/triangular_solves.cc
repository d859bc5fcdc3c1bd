// nas/lu/triangular_solves.cc: the per-plane block triangular solves (see
// triangular_solves.h). The 5x5 diagonal block is eliminated and back-substituted in
// NPB's order, so results match the reference's arithmetic.
#include "nas/lu/triangular_solves.h"

#include "nas/lu/jacobians.h"

namespace nas::lu {
namespace {

// Solves D x = rhs (D stored [column][row]); rhs is overwritten on the way; x may alias
// nothing else. Gaussian elimination without pivoting, as NPB's blts/buts.
inline void solve_diagonal(Block& t, double* rhs, double* x) {
  for (int p = 0; p < 4; ++p) {
    const double tmp1 = 1.0 / t[p][p];
    for (int r = p + 1; r < 5; ++r) {
      const double tmp = tmp1 * t[p][r];
      for (int col = p + 1; col < 5; ++col) t[col][r] = t[col][r] - tmp * t[col][p];
      rhs[r] = rhs[r] - rhs[p] * tmp;
    }
  }
  for (int r = 4; r >= 0; --r) {
    double s = rhs[r];
    for (int col = r + 1; col < 5; ++col) s = s - t[col][r] * x[col];
    x[r] = s / t[r][r];
  }
}

}  // namespace

void lower_solve_plane(LocalFields& f, const Coefficients& c, int k) {
  const DirectionMetrics xm = x_metrics(c), ym = y_metrics(c), zm = z_metrics(c);
  const double omega = c.omega, sdt = -c.dt;
  const double* u = f.u.data();
  const double* rho = f.rho_i.data();
  const double* qs = f.qs.data();
  double* rsd = f.rsd.data();
  Block A, B, C, D;
  double tv[5];
  for (int j = f.jst; j <= f.jend; ++j) {
    for (int i = f.ist; i <= f.iend; ++i) {
      const std::size_t p = f.point(k, j, i);
      const std::size_t pk = f.point(k - 1, j, i), pj = f.point(k, j - 1, i),
                        pi = f.point(k, j, i - 1);
      off_diagonal_block(c, zm, sdt, u + 5 * pk, rho[pk], qs[pk], A);
      off_diagonal_block(c, ym, sdt, u + 5 * pj, rho[pj], qs[pj], B);
      off_diagonal_block(c, xm, sdt, u + 5 * pi, rho[pi], qs[pi], C);
      diagonal_block(c, u + 5 * p, rho[p], D);
      double* v = rsd + 5 * p;
      const double* vk = rsd + 5 * pk;
      const double* vj = rsd + 5 * pj;
      const double* vi = rsd + 5 * pi;
      for (int m = 0; m < 5; ++m)
        v[m] = v[m] - omega * (A[0][m] * vk[0] + A[1][m] * vk[1] + A[2][m] * vk[2] +
                               A[3][m] * vk[3] + A[4][m] * vk[4]);
      for (int m = 0; m < 5; ++m)
        tv[m] = v[m] - omega * (B[0][m] * vj[0] + C[0][m] * vi[0] + B[1][m] * vj[1] +
                                C[1][m] * vi[1] + B[2][m] * vj[2] + C[2][m] * vi[2] +
                                B[3][m] * vj[3] + C[3][m] * vi[3] + B[4][m] * vj[4] +
                                C[4][m] * vi[4]);
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
  Block A, B, C, D;
  double tv[5], x[5];
  for (int j = f.jend; j >= f.jst; --j) {
    for (int i = f.iend; i >= f.ist; --i) {
      const std::size_t p = f.point(k, j, i);
      const std::size_t pk = f.point(k + 1, j, i), pj = f.point(k, j + 1, i),
                        pi = f.point(k, j, i + 1);
      off_diagonal_block(c, xm, sdt, u + 5 * pi, rho[pi], qs[pi], A);
      off_diagonal_block(c, ym, sdt, u + 5 * pj, rho[pj], qs[pj], B);
      off_diagonal_block(c, zm, sdt, u + 5 * pk, rho[pk], qs[pk], C);
      diagonal_block(c, u + 5 * p, rho[p], D);
      double* v = rsd + 5 * p;
      const double* vk = rsd + 5 * pk;
      const double* vj = rsd + 5 * pj;
      const double* vi = rsd + 5 * pi;
      for (int m = 0; m < 5; ++m)
        tv[m] = omega * (C[0][m] * vk[0] + C[1][m] * vk[1] + C[2][m] * vk[2] + C[3][m] * vk[3] +
                         C[4][m] * vk[4]);
      for (int m = 0; m < 5; ++m)
        tv[m] = tv[m] + omega * (B[0][m] * vj[0] + A[0][m] * vi[0] + B[1][m] * vj[1] +
                                 A[1][m] * vi[1] + B[2][m] * vj[2] + A[2][m] * vi[2] +
                                 B[3][m] * vj[3] + A[3][m] * vi[3] + B[4][m] * vj[4] +
                                 A[4][m] * vi[4]);
      solve_diagonal(D, tv, x);
      for (int m = 0; m < 5; ++m) v[m] = v[m] - x[m];
    }
  }
}

}  // namespace nas::lu
