// nas/lu/coefficients.cc: LU's constants (see coefficients.h).
#include "nas/lu/coefficients.h"

#include <algorithm>

namespace nas::lu {

void Coefficients::exact(int gi, int gj, int gk, double out[5]) const {
  npb_exact_solution(double(gi) / (nx0 - 1), double(gj) / (ny0 - 1), double(gk) / (nz0 - 1), out);
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
  return c;
}

}  // namespace nas::lu
