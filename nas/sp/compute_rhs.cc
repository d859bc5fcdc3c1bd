// nas/sp/compute_rhs.cc: derived fields and the right-hand side of one cell (see
// compute_rhs.h). The arithmetic of each point follows NPB's order (x fluxes, x
// dissipation, y, z, times dt) so results match the reference to rounding.
//
// Speed: u, the forcing term and the rhs are stored one array per component, so every
// loop below runs along x over contiguous doubles, which the compiler vectorises: the
// per-point dissipation form is a template parameter, hoisted out of the inner loops (rows
// along y and z have one form; a row along x has at most five runs of equal form).
#include "nas/sp/compute_rhs.h"

#include <cmath>
#include <cstddef>
#include <vector>

#include "nas/sp/block_diagonal.h"
#include "nas/common/vector_clones.h"

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

// The dissipation stencil of one component v at point p along stride s.
template <Form F>
inline double stencil(const double* v, std::ptrdiff_t p, std::ptrdiff_t s) {
  if constexpr (F == kFirst) return 5.0 * v[p] - 4.0 * v[p + s] + v[p + 2 * s];
  if constexpr (F == kSecond) return -4.0 * v[p - s] + 6.0 * v[p] - 4.0 * v[p + s] + v[p + 2 * s];
  if constexpr (F == kThirdLast) return v[p - 2 * s] - 4.0 * v[p - s] + 6.0 * v[p] - 4.0 * v[p + s];
  if constexpr (F == kSecondLast) return v[p - 2 * s] - 4.0 * v[p - s] + 5.0 * v[p];
  return v[p - 2 * s] - 4.0 * v[p - s] + 6.0 * v[p] - 4.0 * v[p + s] + v[p + 2 * s];
}

// One cell's arrays, every one indexed by point.
struct Planes {
  const double* u[5];        // by component
  const double* forcing[5];  // by component
  const double *rho_i, *vel[3], *sq, *qs, *speed, *ainv;
  double* rhs[5];
};

// The coefficients of one direction's flux differences (NPB's names: d = dx1tx1.., t2 =
// tx2, con2..con5 = xxcon2..xxcon5; con2con43 = xxcon2 * con43 as NPB's left-to-right
// product forms it).
struct Direction {
  double d[5], t2, con2, con2con43, con3, con4, con5;
};

// Adds direction D's flux differences and dissipation to the rhs at points [pb, pe] (one
// run along x, all of form F); the first direction starts from the forcing term, the last
// multiplies by dt and applies txinvr when asked.
template <int D, Form F, bool kTxinvr>
NAS_CLONES_AVX2 void rhs_run(const Planes& a, const Direction& c, std::ptrdiff_t s, std::ptrdiff_t pb,
                             std::ptrdiff_t pe, double c1, double c2, double dssp, double dt, double bt) {
  const double *u0 = a.u[0], *u1 = a.u[1], *u2 = a.u[2], *u3 = a.u[3], *u4 = a.u[4];
  const double* un = a.u[D + 1];  // the momentum along this direction
  const double* vn = a.vel[D];    // the velocity along this direction
  const double *rho_i = a.rho_i, *sq = a.sq, *qs = a.qs;
  double *r0 = a.rhs[0], *r1 = a.rhs[1], *r2 = a.rhs[2], *r3 = a.rhs[3], *r4 = a.rhs[4];
  const double d0 = c.d[0], d1 = c.d[1], d2 = c.d[2], d3 = c.d[3], d4 = c.d[4];
  const double t2 = c.t2, con2 = c.con2, con2con43 = c.con2con43, con3 = c.con3, con4 = c.con4, con5 = c.con5;
  const double* um[5] = {u0, u1, u2, u3, u4};
  const double *f0 = a.forcing[0], *f1 = a.forcing[1], *f2 = a.forcing[2], *f3 = a.forcing[3], *f4 = a.forcing[4];
  const double *vel0 = a.vel[0], *vel1 = a.vel[1], *vel2 = a.vel[2];
  const double *speed = a.speed, *ainv = a.ainv;
#pragma GCC ivdep
  for (std::ptrdiff_t p = pb; p <= pe; ++p) {
    double r[5];
    if constexpr (D == 0) {
      r[0] = f0[p], r[1] = f1[p], r[2] = f2[p], r[3] = f3[p], r[4] = f4[p];
    } else {
      r[0] = r0[p], r[1] = r1[p], r[2] = r2[p], r[3] = r3[p], r[4] = r4[p];
    }
    const double vijk = vn[p], vp1 = vn[p + s], vm1 = vn[p - s];
    r[0] = r[0] + d0 * (u0[p + s] - 2.0 * u0[p] + u0[p - s]) - t2 * (un[p + s] - un[p - s]);
    const double ds[3] = {d1, d2, d3};
    const double* vels[3] = {vel0, vel1, vel2};
    for (int m = 1; m < 4; ++m) {
      const double* v = um[m];
      if (m == D + 1) {
        r[m] = r[m] + ds[m - 1] * (v[p + s] - 2.0 * v[p] + v[p - s]) + con2con43 * (vp1 - 2.0 * vijk + vm1) -
               t2 * (v[p + s] * vp1 - v[p - s] * vm1 + (u4[p + s] - sq[p + s] - u4[p - s] + sq[p - s]) * c2);
      } else {
        const double* w = vels[m - 1];
        r[m] = r[m] + ds[m - 1] * (v[p + s] - 2.0 * v[p] + v[p - s]) + con2 * (w[p + s] - 2.0 * w[p] + w[p - s]) -
               t2 * (v[p + s] * vp1 - v[p - s] * vm1);
      }
    }
    r[4] = r[4] + d4 * (u4[p + s] - 2.0 * u4[p] + u4[p - s]) + con3 * (qs[p + s] - 2.0 * qs[p] + qs[p - s]) +
           con4 * (vp1 * vp1 - 2.0 * vijk * vijk + vm1 * vm1) +
           con5 * (u4[p + s] * rho_i[p + s] - 2.0 * u4[p] * rho_i[p] + u4[p - s] * rho_i[p - s]) -
           t2 * ((c1 * u4[p + s] - c2 * sq[p + s]) * vp1 - (c1 * u4[p - s] - c2 * sq[p - s]) * vm1);
    for (int m = 0; m < 5; ++m) r[m] = r[m] - dssp * stencil<F>(um[m], p, s);
    if constexpr (D == 2) {
      for (int m = 0; m < 5; ++m) r[m] = r[m] * dt;
      if constexpr (kTxinvr) txinvr_point(r, rho_i[p], vel0[p], vel1[p], vel2[p], qs[p], speed[p], ainv[p], c2, bt);
    }
    r0[p] = r[0], r1[p] = r[1], r2[p] = r[2], r3[p] = r[3], r4[p] = r[4];
  }
}

template <int D, bool kTxinvr>
void rhs_run_of(Form form, const Planes& a, const Direction& c, std::ptrdiff_t s, std::ptrdiff_t pb, std::ptrdiff_t pe,
                double c1, double c2, double dssp, double dt, double bt) {
  switch (form) {
    case kFirst:
      return rhs_run<D, kFirst, kTxinvr>(a, c, s, pb, pe, c1, c2, dssp, dt, bt);
    case kSecond:
      return rhs_run<D, kSecond, kTxinvr>(a, c, s, pb, pe, c1, c2, dssp, dt, bt);
    case kThirdLast:
      return rhs_run<D, kThirdLast, kTxinvr>(a, c, s, pb, pe, c1, c2, dssp, dt, bt);
    case kSecondLast:
      return rhs_run<D, kSecondLast, kTxinvr>(a, c, s, pb, pe, c1, c2, dssp, dt, bt);
    default:
      return rhs_run<D, kFull, kTxinvr>(a, c, s, pb, pe, c1, c2, dssp, dt, bt);
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
  const std::size_t n = f.cstride;
  const double* U = f.u.data();
  const double c1c2 = k.c1c2;
  for (int lk = lo[2]; lk <= hi[2]; ++lk)
    for (int lj = lo[1]; lj <= hi[1]; ++lj) {
      const std::size_t p0 = f.at(lo[0], lj, lk);
      const int count = hi[0] - lo[0] + 1;
      const double *v0 = U + p0, *v1 = v0 + n, *v2 = v1 + n, *v3 = v2 + n, *v4 = v3 + n;
      double* rho_i = f.rho_i.data() + p0;
      double* us = f.us.data() + p0;
      double* vs = f.vs.data() + p0;
      double* ws = f.ws.data() + p0;
      double* square = f.square.data() + p0;
      double* qs = f.qs.data() + p0;
      double* speed = f.speed.data() + p0;
      double* ainv = f.ainv.data() + p0;
#pragma GCC ivdep
      for (int i = 0; i < count; ++i) {
        const double rho_inv = 1.0 / v0[i];
        rho_i[i] = rho_inv;
        us[i] = v1[i] * rho_inv;
        vs[i] = v2[i] * rho_inv;
        ws[i] = v3[i] * rho_inv;
        const double sq = 0.5 * (v1[i] * v1[i] + v2[i] * v2[i] + v3[i] * v3[i]) * rho_inv;
        square[i] = sq;
        qs[i] = sq * rho_inv;
        const double aux = std::sqrt(c1c2 * rho_inv * (v4[i] - sq));
        speed[i] = aux;
        ainv[i] = 1.0 / aux;
      }
    }
}

}  // namespace

NAS_CLONES_AVX2 void compute_rhs(const SpConstants& k, CellFields& f, bool apply_txinvr) {
  derived_fields(k, f);
  const Cell& c = f.cell;
  const int n = k.n;
  const auto fx = dissipation_forms(c, 0, n);
  const auto fy = dissipation_forms(c, 1, n);
  const auto fz = dissipation_forms(c, 2, n);
  const LocalRange rx = interior_range(c, 0, n), ry = interior_range(c, 1, n), rz = interior_range(c, 2, n);
  const std::ptrdiff_t sy = f.ni, sz = std::ptrdiff_t(f.ni) * f.nj;
  Planes a;
  for (int m = 0; m < 5; ++m) {
    a.u[m] = f.u.data() + std::size_t(m) * f.cstride;
    a.forcing[m] = f.forcing.data() + std::size_t(m) * f.cstride;
    a.rhs[m] = f.rhs_of(m);
  }
  a.rho_i = f.rho_i.data();
  a.vel[0] = f.us.data(), a.vel[1] = f.vs.data(), a.vel[2] = f.ws.data();
  a.sq = f.square.data();
  a.qs = f.qs.data();
  a.speed = f.speed.data();
  a.ainv = f.ainv.data();
  const Direction dx{{k.dx1tx1, k.dx2tx1, k.dx3tx1, k.dx4tx1, k.dx5tx1},
                     k.tx2,
                     k.xxcon2,
                     k.xxcon2 * k.con43,
                     k.xxcon3,
                     k.xxcon4,
                     k.xxcon5};
  const Direction dy{{k.dy1ty1, k.dy2ty1, k.dy3ty1, k.dy4ty1, k.dy5ty1},
                     k.ty2,
                     k.yycon2,
                     k.yycon2 * k.con43,
                     k.yycon3,
                     k.yycon4,
                     k.yycon5};
  const Direction dz{{k.dz1tz1, k.dz2tz1, k.dz3tz1, k.dz4tz1, k.dz5tz1},
                     k.tz2,
                     k.zzcon2,
                     k.zzcon2 * k.con43,
                     k.zzcon3,
                     k.zzcon4,
                     k.zzcon5};
  const double c1 = k.c1, c2 = k.c2, dssp = k.dssp, dt = k.dt, bt = k.bt;

  // One pass per direction, as NPB orders the sums. Along x a row splits into runs of
  // equal dissipation form.
  for (int lk = rz.lo; lk <= rz.hi; ++lk)
    for (int lj = ry.lo; lj <= ry.hi; ++lj) {
      const std::ptrdiff_t p0 = std::ptrdiff_t(f.at(0, lj, lk));
      for (int li = rx.lo; li <= rx.hi;) {
        int end = li;
        while (end + 1 <= rx.hi && fx[end + 1] == fx[li]) ++end;
        rhs_run_of<0, false>(fx[li], a, dx, 1, p0 + li, p0 + end, c1, c2, dssp, dt, bt);
        li = end + 1;
      }
    }
  for (int lk = rz.lo; lk <= rz.hi; ++lk)
    for (int lj = ry.lo; lj <= ry.hi; ++lj) {
      const std::ptrdiff_t p0 = std::ptrdiff_t(f.at(0, lj, lk));
      rhs_run_of<1, false>(fy[lj], a, dy, sy, p0 + rx.lo, p0 + rx.hi, c1, c2, dssp, dt, bt);
    }
  for (int lk = rz.lo; lk <= rz.hi; ++lk)
    for (int lj = ry.lo; lj <= ry.hi; ++lj) {
      const std::ptrdiff_t p0 = std::ptrdiff_t(f.at(0, lj, lk));
      if (apply_txinvr) rhs_run_of<2, true>(fz[lk], a, dz, sz, p0 + rx.lo, p0 + rx.hi, c1, c2, dssp, dt, bt);
      else rhs_run_of<2, false>(fz[lk], a, dz, sz, p0 + rx.lo, p0 + rx.hi, c1, c2, dssp, dt, bt);
    }
}

}  // namespace nas::sp
