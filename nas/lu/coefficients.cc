// nas/lu/coefficients.cc: LU's constants (see coefficients.h).
#include "nas/lu/coefficients.h"

#include <algorithm>

namespace nas::lu {
namespace {

// The exact solution's polynomial coefficients, one row per equation:
// constant, xi, eta, zeta, xi^2, eta^2, zeta^2, xi^3, ..., zeta^4 (NPB's ce table).
constexpr double kExactTerms[5][13] = {
    {2.0, 0.0, 0.0, 4.0, 5.0, 3.0, 0.5, 0.02, 0.01, 0.03, 0.5, 0.4, 0.3},
    {1.0, 0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 0.01, 0.03, 0.02, 0.4, 0.3, 0.5},
    {2.0, 2.0, 0.0, 0.0, 0.0, 2.0, 3.0, 0.04, 0.03, 0.05, 0.3, 0.5, 0.4},
    {2.0, 2.0, 0.0, 0.0, 0.0, 2.0, 3.0, 0.03, 0.05, 0.04, 0.2, 0.1, 0.3},
    {5.0, 4.0, 3.0, 2.0, 0.1, 0.4, 0.3, 0.05, 0.04, 0.03, 0.1, 0.3, 0.2},
};

}  // namespace

void Coefficients::exact(int gi, int gj, int gk, double out[5]) const {
  const double xi = double(gi) / (nx0 - 1);
  const double eta = double(gj) / (ny0 - 1);
  const double zeta = double(gk) / (nz0 - 1);
  for (int m = 0; m < 5; ++m) {
    // Horner form per coordinate, summed in the order xi, eta, zeta.
    out[m] = ce[0][m] + (ce[1][m] + (ce[4][m] + (ce[7][m] + ce[10][m] * xi) * xi) * xi) * xi +
             (ce[2][m] + (ce[5][m] + (ce[8][m] + ce[11][m] * eta) * eta) * eta) * eta +
             (ce[3][m] + (ce[6][m] + (ce[9][m] + ce[12][m] * zeta) * zeta) * zeta) * zeta;
  }
}

Coefficients make_coefficients(int nx0, int ny0, int nz0, double dt) {
  Coefficients c;
  c.nx0 = nx0;
  c.ny0 = ny0;
  c.nz0 = nz0;
  c.dt = dt;
  c.dxi = 1.0 / (nx0 - 1);
  c.deta = 1.0 / (ny0 - 1);
  c.dzeta = 1.0 / (nz0 - 1);
  c.tx1 = 1.0 / (c.dxi * c.dxi);
  c.tx2 = 1.0 / (2.0 * c.dxi);
  c.tx3 = 1.0 / c.dxi;
  c.ty1 = 1.0 / (c.deta * c.deta);
  c.ty2 = 1.0 / (2.0 * c.deta);
  c.ty3 = 1.0 / c.deta;
  c.tz1 = 1.0 / (c.dzeta * c.dzeta);
  c.tz2 = 1.0 / (2.0 * c.dzeta);
  c.tz3 = 1.0 / c.dzeta;
  c.dx1 = c.dx2 = c.dx3 = c.dx4 = c.dx5 = 0.75;
  c.dy1 = c.dy2 = c.dy3 = c.dy4 = c.dy5 = 0.75;
  c.dz1 = c.dz2 = c.dz3 = c.dz4 = c.dz5 = 1.00;
  c.dssp = std::max(std::max(c.dx1, c.dy1), c.dz1) / 4.0;
  for (int m = 0; m < 5; ++m)
    for (int t = 0; t < 13; ++t) c.ce[t][m] = kExactTerms[m][t];
  return c;
}

}  // namespace nas::lu
