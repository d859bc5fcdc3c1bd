// nas/sp/compute_rhs.cc: derived fields and the right-hand side of one cell (see
// compute_rhs.h). The arithmetic of each point follows NPB's order (x fluxes, x
// dissipation, y, z, times dt) so results match the reference to rounding.
#include "nas/sp/compute_rhs.h"

#include <cmath>
#include <vector>

#include "nas/sp/block_diagonal.h"

namespace nas::sp {
namespace {

// Which form of the fourth-order dissipation stencil each local index of one axis uses:
// NPB's one-sided forms next to the grid boundary, the full 5-point form elsewhere.
enum Form : unsigned char { kFull, kFirst, kSecond, kThirdLast, kSecondLast };

std::vector<Form> dissipation_forms(const Cell& c, int axis, int n) {
  std::vector<Form> forms(c.size[axis]);
  for (int l = 0; l < c.size[axis]; ++l) {
    const int g = c.low[axis] + l;
    forms[l] = g == 1 ? kFirst : g == 2 ? kSecond : g == n - 3 ? kThirdLast : g == n - 2 ? kSecondLast : kFull;
  }
  return forms;
}

// r[m] -= dssp * (the dissipation stencil of component m) at point p along stride s
// (u interleaved by 5), for all five components; one branch per point, not per component.
inline void subtract_dissipation(double* r, const double* U, std::ptrdiff_t p, std::ptrdiff_t s, Form form,
                                 double dssp) {
  const double* um2 = U + 5 * (p - 2 * s);
  const double* um1 = U + 5 * (p - s);
  const double* u0 = U + 5 * p;
  const double* up1 = U + 5 * (p + s);
  const double* up2 = U + 5 * (p + 2 * s);
  switch (form) {
    case kFirst:
      for (int m = 0; m < 5; ++m) r[m] = r[m] - dssp * (5.0 * u0[m] - 4.0 * up1[m] + up2[m]);
      break;
    case kSecond:
      for (int m = 0; m < 5; ++m) r[m] = r[m] - dssp * (-4.0 * um1[m] + 6.0 * u0[m] - 4.0 * up1[m] + up2[m]);
      break;
    case kThirdLast:
      for (int m = 0; m < 5; ++m) r[m] = r[m] - dssp * (um2[m] - 4.0 * um1[m] + 6.0 * u0[m] - 4.0 * up1[m]);
      break;
    case kSecondLast:
      for (int m = 0; m < 5; ++m) r[m] = r[m] - dssp * (um2[m] - 4.0 * um1[m] + 5.0 * u0[m]);
      break;
    default:
      for (int m = 0; m < 5; ++m) r[m] = r[m] - dssp * (um2[m] - 4.0 * um1[m] + 6.0 * u0[m] - 4.0 * up1[m] + up2[m]);
  }
}

// Over the cell and, on the sides where another cell lies, one ghost layer (what the
// flux differences and the line solves read).
void derived_fields(const SpConstants& k, CellFields& f) {
  const Cell& c = f.cell;
  int lo[3], hi[3];
  for (int a = 0; a < 3; ++a) {
    lo[a] = c.low[a] == 0 ? 0 : -1;
    hi[a] = c.low[a] + c.size[a] == k.n ? c.size[a] - 1 : c.size[a];
  }
  for (int lk = lo[2]; lk <= hi[2]; ++lk)
    for (int lj = lo[1]; lj <= hi[1]; ++lj) {
      const std::size_t p0 = f.at(lo[0], lj, lk);
      const int count = hi[0] - lo[0] + 1;
      const double* u = f.u.data() + 5 * p0;
      double* rho_i = f.rho_i.data() + p0;
      double* us = f.us.data() + p0;
      double* vs = f.vs.data() + p0;
      double* ws = f.ws.data() + p0;
      double* square = f.square.data() + p0;
      double* qs = f.qs.data() + p0;
      double* speed = f.speed.data() + p0;
      double* ainv = f.ainv.data() + p0;
      for (int i = 0; i < count; ++i) {
        const double* v = u + 5 * i;
        const double rho_inv = 1.0 / v[0];
        rho_i[i] = rho_inv;
        us[i] = v[1] * rho_inv;
        vs[i] = v[2] * rho_inv;
        ws[i] = v[3] * rho_inv;
        square[i] = 0.5 * (v[1] * v[1] + v[2] * v[2] + v[3] * v[3]) * rho_inv;
        qs[i] = square[i] * rho_inv;
        const double aux = std::sqrt(k.c1c2 * rho_inv * (v[4] - square[i]));
        speed[i] = aux;
        ainv[i] = 1.0 / aux;
      }
    }
}

}  // namespace

void compute_rhs(const SpConstants& k, CellFields& f, bool apply_txinvr) {
  derived_fields(k, f);
  const Cell& c = f.cell;
  const int n = k.n;
  const auto fx = dissipation_forms(c, 0, n);
  const auto fy = dissipation_forms(c, 1, n);
  const auto fz = dissipation_forms(c, 2, n);
  const LocalRange rx = interior_range(c, 0, n), ry = interior_range(c, 1, n), rz = interior_range(c, 2, n);
  const std::ptrdiff_t sy = f.ni, sz = std::ptrdiff_t(f.ni) * f.nj;
  const double* U = f.u.data();
  const double* rho_i = f.rho_i.data();
  const double* us = f.us.data();
  const double* vs = f.vs.data();
  const double* ws = f.ws.data();
  const double* sq = f.square.data();
  const double* qs = f.qs.data();
  double* RHS[5];
  for (int m = 0; m < 5; ++m) RHS[m] = f.rhs_of(m);
  const double dssp = k.dssp, dt = k.dt, c1 = k.c1, c2 = k.c2;

  // One pass per direction (as NPB orders the sums; fewer live values than one fused pass).
  for (int lk = rz.lo; lk <= rz.hi; ++lk)
    for (int lj = ry.lo; lj <= ry.hi; ++lj) {
      for (int li = rx.lo; li <= rx.hi; ++li) {
        const std::ptrdiff_t p = std::ptrdiff_t(f.at(li, lj, lk));
        auto u = [&](int m, std::ptrdiff_t off) { return U[5 * (p + off) + m]; };
        const double* F = f.forcing.data() + 5 * p;
        double r[5] = {F[0], F[1], F[2], F[3], F[4]};
        // xi-direction fluxes.
        {
          const std::ptrdiff_t s = 1;
          const double uijk = us[p], up1 = us[p + s], um1 = us[p - s];
          r[0] = r[0] + k.dx1tx1 * (u(0, s) - 2.0 * u(0, 0) + u(0, -s)) - k.tx2 * (u(1, s) - u(1, -s));
          r[1] = r[1] + k.dx2tx1 * (u(1, s) - 2.0 * u(1, 0) + u(1, -s)) +
                 k.xxcon2 * k.con43 * (up1 - 2.0 * uijk + um1) -
                 k.tx2 * (u(1, s) * up1 - u(1, -s) * um1 + (u(4, s) - sq[p + s] - u(4, -s) + sq[p - s]) * c2);
          r[2] = r[2] + k.dx3tx1 * (u(2, s) - 2.0 * u(2, 0) + u(2, -s)) +
                 k.xxcon2 * (vs[p + s] - 2.0 * vs[p] + vs[p - s]) - k.tx2 * (u(2, s) * up1 - u(2, -s) * um1);
          r[3] = r[3] + k.dx4tx1 * (u(3, s) - 2.0 * u(3, 0) + u(3, -s)) +
                 k.xxcon2 * (ws[p + s] - 2.0 * ws[p] + ws[p - s]) - k.tx2 * (u(3, s) * up1 - u(3, -s) * um1);
          r[4] = r[4] + k.dx5tx1 * (u(4, s) - 2.0 * u(4, 0) + u(4, -s)) +
                 k.xxcon3 * (qs[p + s] - 2.0 * qs[p] + qs[p - s]) +
                 k.xxcon4 * (up1 * up1 - 2.0 * uijk * uijk + um1 * um1) +
                 k.xxcon5 * (u(4, s) * rho_i[p + s] - 2.0 * u(4, 0) * rho_i[p] + u(4, -s) * rho_i[p - s]) -
                 k.tx2 * ((c1 * u(4, s) - c2 * sq[p + s]) * up1 - (c1 * u(4, -s) - c2 * sq[p - s]) * um1);
          const Form form = fx[li];
          subtract_dissipation(r, U, p, s, form, dssp);
        }
        for (int m = 0; m < 5; ++m) RHS[m][p] = r[m];
      }
    }
  for (int lk = rz.lo; lk <= rz.hi; ++lk)
    for (int lj = ry.lo; lj <= ry.hi; ++lj) {
      const Form form = fy[lj];
      for (int li = rx.lo; li <= rx.hi; ++li) {
        const std::ptrdiff_t p = std::ptrdiff_t(f.at(li, lj, lk));
        auto u = [&](int m, std::ptrdiff_t off) { return U[5 * (p + off) + m]; };
        double r[5] = {RHS[0][p], RHS[1][p], RHS[2][p], RHS[3][p], RHS[4][p]};
        // eta-direction fluxes.
        {
          const std::ptrdiff_t s = sy;
          const double vijk = vs[p], vp1 = vs[p + s], vm1 = vs[p - s];
          r[0] = r[0] + k.dy1ty1 * (u(0, s) - 2.0 * u(0, 0) + u(0, -s)) - k.ty2 * (u(2, s) - u(2, -s));
          r[1] = r[1] + k.dy2ty1 * (u(1, s) - 2.0 * u(1, 0) + u(1, -s)) +
                 k.yycon2 * (us[p + s] - 2.0 * us[p] + us[p - s]) - k.ty2 * (u(1, s) * vp1 - u(1, -s) * vm1);
          r[2] = r[2] + k.dy3ty1 * (u(2, s) - 2.0 * u(2, 0) + u(2, -s)) +
                 k.yycon2 * k.con43 * (vp1 - 2.0 * vijk + vm1) -
                 k.ty2 * (u(2, s) * vp1 - u(2, -s) * vm1 + (u(4, s) - sq[p + s] - u(4, -s) + sq[p - s]) * c2);
          r[3] = r[3] + k.dy4ty1 * (u(3, s) - 2.0 * u(3, 0) + u(3, -s)) +
                 k.yycon2 * (ws[p + s] - 2.0 * ws[p] + ws[p - s]) - k.ty2 * (u(3, s) * vp1 - u(3, -s) * vm1);
          r[4] = r[4] + k.dy5ty1 * (u(4, s) - 2.0 * u(4, 0) + u(4, -s)) +
                 k.yycon3 * (qs[p + s] - 2.0 * qs[p] + qs[p - s]) +
                 k.yycon4 * (vp1 * vp1 - 2.0 * vijk * vijk + vm1 * vm1) +
                 k.yycon5 * (u(4, s) * rho_i[p + s] - 2.0 * u(4, 0) * rho_i[p] + u(4, -s) * rho_i[p - s]) -
                 k.ty2 * ((c1 * u(4, s) - c2 * sq[p + s]) * vp1 - (c1 * u(4, -s) - c2 * sq[p - s]) * vm1);
          subtract_dissipation(r, U, p, s, form, dssp);
        }
        for (int m = 0; m < 5; ++m) RHS[m][p] = r[m];
      }
    }
  for (int lk = rz.lo; lk <= rz.hi; ++lk)
    for (int lj = ry.lo; lj <= ry.hi; ++lj) {
      const Form form = fz[lk];
      for (int li = rx.lo; li <= rx.hi; ++li) {
        const std::ptrdiff_t p = std::ptrdiff_t(f.at(li, lj, lk));
        auto u = [&](int m, std::ptrdiff_t off) { return U[5 * (p + off) + m]; };
        double r[5] = {RHS[0][p], RHS[1][p], RHS[2][p], RHS[3][p], RHS[4][p]};
        // zeta-direction fluxes.
        {
          const std::ptrdiff_t s = sz;
          const double wijk = ws[p], wp1 = ws[p + s], wm1 = ws[p - s];
          r[0] = r[0] + k.dz1tz1 * (u(0, s) - 2.0 * u(0, 0) + u(0, -s)) - k.tz2 * (u(3, s) - u(3, -s));
          r[1] = r[1] + k.dz2tz1 * (u(1, s) - 2.0 * u(1, 0) + u(1, -s)) +
                 k.zzcon2 * (us[p + s] - 2.0 * us[p] + us[p - s]) - k.tz2 * (u(1, s) * wp1 - u(1, -s) * wm1);
          r[2] = r[2] + k.dz3tz1 * (u(2, s) - 2.0 * u(2, 0) + u(2, -s)) +
                 k.zzcon2 * (vs[p + s] - 2.0 * vs[p] + vs[p - s]) - k.tz2 * (u(2, s) * wp1 - u(2, -s) * wm1);
          r[3] = r[3] + k.dz4tz1 * (u(3, s) - 2.0 * u(3, 0) + u(3, -s)) +
                 k.zzcon2 * k.con43 * (wp1 - 2.0 * wijk + wm1) -
                 k.tz2 * (u(3, s) * wp1 - u(3, -s) * wm1 + (u(4, s) - sq[p + s] - u(4, -s) + sq[p - s]) * c2);
          r[4] = r[4] + k.dz5tz1 * (u(4, s) - 2.0 * u(4, 0) + u(4, -s)) +
                 k.zzcon3 * (qs[p + s] - 2.0 * qs[p] + qs[p - s]) +
                 k.zzcon4 * (wp1 * wp1 - 2.0 * wijk * wijk + wm1 * wm1) +
                 k.zzcon5 * (u(4, s) * rho_i[p + s] - 2.0 * u(4, 0) * rho_i[p] + u(4, -s) * rho_i[p - s]) -
                 k.tz2 * ((c1 * u(4, s) - c2 * sq[p + s]) * wp1 - (c1 * u(4, -s) - c2 * sq[p - s]) * wm1);
          subtract_dissipation(r, U, p, s, form, dssp);
        }
        for (int m = 0; m < 5; ++m) r[m] = r[m] * dt;
        if (apply_txinvr) txinvr_point(r, rho_i[p], us[p], vs[p], ws[p], qs[p], f.speed[p], f.ainv[p], c2, k.bt);
        for (int m = 0; m < 5; ++m) RHS[m][p] = r[m];
      }
    }
}

}  // namespace nas::sp
