// nas/lu/jacobians.cc: LU's 5x5 Jacobian blocks (see jacobians.h). The formulas are the
// NPB 3.3 ones (with 1/rho and qs precomputed by rhs), written once for a generic
// direction: `n` is the momentum component normal to it, `o` the two tangential ones.
#include "nas/lu/jacobians.h"

namespace nas::lu {
namespace {

constexpr double r43 = 4.0 / 3.0;
constexpr double c1345 = kC1 * kC3 * kC4 * kC5;
constexpr double c34 = kC3 * kC4;

}  // namespace

void diagonal_block(const Coefficients& c, const double* w, double rho_i, Block& D) {
  const double dt = c.dt, tx1 = c.tx1, ty1 = c.ty1, tz1 = c.tz1;
  const double tmp1 = rho_i, tmp2 = tmp1 * tmp1, tmp3 = tmp1 * tmp2;
  for (int n = 0; n < 5; ++n)
    for (int m = 0; m < 5; ++m) D[n][m] = 0.0;
  D[0][0] = 1.0 + dt * 2.0 * (tx1 * c.dx1 + ty1 * c.dy1 + tz1 * c.dz1);
  D[0][1] = -dt * 2.0 * (tx1 * r43 + ty1 + tz1) * c34 * tmp2 * w[1];
  D[1][1] = 1.0 + dt * 2.0 * c34 * tmp1 * (tx1 * r43 + ty1 + tz1) +
            dt * 2.0 * (tx1 * c.dx2 + ty1 * c.dy2 + tz1 * c.dz2);
  D[0][2] = -dt * 2.0 * (tx1 + ty1 * r43 + tz1) * c34 * tmp2 * w[2];
  D[2][2] = 1.0 + dt * 2.0 * c34 * tmp1 * (tx1 + ty1 * r43 + tz1) +
            dt * 2.0 * (tx1 * c.dx3 + ty1 * c.dy3 + tz1 * c.dz3);
  D[0][3] = -dt * 2.0 * (tx1 + ty1 + tz1 * r43) * c34 * tmp2 * w[3];
  D[3][3] = 1.0 + dt * 2.0 * c34 * tmp1 * (tx1 + ty1 + tz1 * r43) +
            dt * 2.0 * (tx1 * c.dx4 + ty1 * c.dy4 + tz1 * c.dz4);
  const double cx = tx1 * (r43 * c34 - c1345) + ty1 * (c34 - c1345) + tz1 * (c34 - c1345);
  const double cy = tx1 * (c34 - c1345) + ty1 * (r43 * c34 - c1345) + tz1 * (c34 - c1345);
  const double cz = tx1 * (c34 - c1345) + ty1 * (c34 - c1345) + tz1 * (r43 * c34 - c1345);
  D[0][4] = -dt * 2.0 *
            ((cx * (w[1] * w[1]) + cy * (w[2] * w[2]) + cz * (w[3] * w[3])) * tmp3 +
             (tx1 + ty1 + tz1) * c1345 * tmp2 * w[4]);
  D[1][4] = dt * 2.0 * tmp2 * w[1] * cx;
  D[2][4] = dt * 2.0 * tmp2 * w[2] * cy;
  D[3][4] = dt * 2.0 * tmp2 * w[3] * cz;
  D[4][4] = 1.0 + dt * 2.0 * (tx1 + ty1 + tz1) * c1345 * tmp1 +
            dt * 2.0 * (tx1 * c.dx5 + ty1 * c.dy5 + tz1 * c.dz5);
}

void off_diagonal_block(const Coefficients& c, const DirectionMetrics& dir, double sdt,
                        const double* w, double rho_i, double q, Block& M) {
  constexpr double C1 = kC1, C2 = kC2;
  const double dt = c.dt, t1 = dir.t1, t2 = dir.t2;
  const double tmp1 = rho_i, tmp2 = tmp1 * tmp1, tmp3 = tmp1 * tmp2;
  const int n = dir.normal;
  const double wn = w[n];
  for (int a = 0; a < 5; ++a)
    for (int b = 0; b < 5; ++b) M[a][b] = 0.0;

  // Continuity row.
  M[0][0] = -dt * t1 * dir.d[0];
  M[n][0] = sdt * t2;

  // Normal momentum row.
  M[0][n] = sdt * t2 * (-(wn * tmp1) * (wn * tmp1) + C2 * q * tmp1) -
            dt * t1 * (-r43 * c34 * tmp2 * wn);
  M[n][n] = sdt * t2 * ((2.0 - C2) * (wn * tmp1)) - dt * t1 * (r43 * c34 * tmp1) -
            dt * t1 * dir.d[n];
  M[4][n] = sdt * t2 * C2;

  // Tangential momentum rows, and their entries in the normal row.
  for (int o = 1; o <= 3; ++o) {
    if (o == n) continue;
    const double wo = w[o];
    M[o][n] = sdt * t2 * (-C2 * (wo * tmp1));
    M[0][o] = sdt * t2 * (-(wn * wo) * tmp2) - dt * t1 * (-c34 * tmp2 * wo);
    M[n][o] = sdt * t2 * (wo * tmp1);
    M[o][o] = sdt * t2 * (wn * tmp1) - dt * t1 * (c34 * tmp1) - dt * t1 * dir.d[o];
  }

  // Energy row.
  double cm[4];
  for (int m = 1; m <= 3; ++m) cm[m] = m == n ? (r43 * c34 - c1345) : (c34 - c1345);
  M[0][4] = sdt * t2 * ((C2 * 2.0 * q - C1 * w[4]) * (wn * tmp2)) -
            dt * t1 *
                (-cm[1] * tmp3 * (w[1] * w[1]) - cm[2] * tmp3 * (w[2] * w[2]) -
                 cm[3] * tmp3 * (w[3] * w[3]) - c1345 * tmp2 * w[4]);
  M[n][4] = sdt * t2 * (C1 * (w[4] * tmp1) - C2 * (q * tmp1 + wn * wn * tmp2)) -
            dt * t1 * (r43 * c34 - c1345) * tmp2 * wn;
  for (int o = 1; o <= 3; ++o) {
    if (o == n) continue;
    M[o][4] = sdt * t2 * (-C2 * (w[o] * wn) * tmp2) - dt * t1 * (c34 - c1345) * tmp2 * w[o];
  }
  M[4][4] = sdt * t2 * (C1 * (wn * tmp1)) - dt * t1 * c1345 * tmp1 - dt * t1 * dir.d[4];
}

}  // namespace nas::lu
