// nas/sp/initial_state.cc: initial solution and forcing term of one cell (see
// initial_state.h).
#include "nas/sp/initial_state.h"

#include <algorithm>
#include <vector>

namespace nas::sp {

void initialize_solution(const SpConstants& k, CellFields& f) {
  const int n = k.n;
  const Cell& c = f.cell;
  const double dn[3] = {k.dnxm1, k.dnym1, k.dnzm1};
  for (int lk = 0; lk < c.size[2]; ++lk)
    for (int lj = 0; lj < c.size[1]; ++lj)
      for (int li = 0; li < c.size[0]; ++li) {
        const int g[3] = {c.low[0] + li, c.low[1] + lj, c.low[2] + lk};
        double x[3];
        for (int a = 0; a < 3; ++a) x[a] = double(g[a]) * dn[a];
        double value[5];
        // The faces are written in the order west, east, south, north, bottom, top: the
        // last one holding the point decides its value (its own coordinate exactly 0 or 1).
        int face_axis = -1, face_side = 0;
        for (int a = 0; a < 3; ++a) {
          if (g[a] == 0) face_axis = a, face_side = 0;
          if (g[a] == n - 1) face_axis = a, face_side = 1;
        }
        if (face_axis >= 0) {
          double y[3] = {x[0], x[1], x[2]};
          y[face_axis] = face_side ? 1.0 : 0.0;
          npb_exact_solution(y[0], y[1], y[2], value);
        } else {
          double face[2][3][5];
          for (int side = 0; side < 2; ++side) {
            npb_exact_solution(double(side), x[1], x[2], face[side][0]);
            npb_exact_solution(x[0], double(side), x[2], face[side][1]);
            npb_exact_solution(x[0], x[1], double(side), face[side][2]);
          }
          for (int m = 0; m < 5; ++m) {
            const double pxi = x[0] * face[1][0][m] + (1.0 - x[0]) * face[0][0][m];
            const double peta = x[1] * face[1][1][m] + (1.0 - x[1]) * face[0][1][m];
            const double pzeta = x[2] * face[1][2][m] + (1.0 - x[2]) * face[0][2][m];
            value[m] = pxi + peta + pzeta - pxi * peta - pxi * pzeta - peta * pzeta + pxi * peta * pzeta;
          }
        }
        const std::size_t p = f.at(li, lj, lk);
        for (int m = 0; m < 5; ++m) f.u[m * f.cstride + p] = value[m];
      }
}

namespace {

// Per-direction coefficients of the forcing term's flux differences.
struct FluxCoefficients {
  double t2, con1, con2, con3, con4, con5;
  double d[5];  // dx1tx1 .. dx5tx1 (or y, z)
};

FluxCoefficients coefficients(const SpConstants& k, int axis) {
  if (axis == 0)
    return {
        k.tx2, k.xxcon1, k.xxcon2, k.xxcon3, k.xxcon4, k.xxcon5, {k.dx1tx1, k.dx2tx1, k.dx3tx1, k.dx4tx1, k.dx5tx1}};
  if (axis == 1)
    return {
        k.ty2, k.yycon1, k.yycon2, k.yycon3, k.yycon4, k.yycon5, {k.dy1ty1, k.dy2ty1, k.dy3ty1, k.dy4ty1, k.dy5ty1}};
  return {k.tz2, k.zzcon1, k.zzcon2, k.zzcon3, k.zzcon4, k.zzcon5, {k.dz1tz1, k.dz2tz1, k.dz3tz1, k.dz4tz1, k.dz5tz1}};
}

// Fourth-order dissipation stencil at global index g of a line of n points.
double dissipation(const double* v, int g, int n) {
  if (g == 1) return 5.0 * v[g] - 4.0 * v[g + 1] + v[g + 2];
  if (g == 2) return -4.0 * v[g - 1] + 6.0 * v[g] - 4.0 * v[g + 1] + v[g + 2];
  if (g == n - 3) return v[g - 2] - 4.0 * v[g - 1] + 6.0 * v[g] - 4.0 * v[g + 1];
  if (g == n - 2) return v[g - 2] - 4.0 * v[g - 1] + 5.0 * v[g];
  return v[g - 2] - 4.0 * v[g - 1] + 6.0 * v[g] - 4.0 * v[g + 1] + v[g + 2];
}

}  // namespace

void compute_forcing(const SpConstants& k, CellFields& f) {
  const int n = k.n;
  const Cell& c = f.cell;
  const double dn[3] = {k.dnxm1, k.dnym1, k.dnzm1};
  LocalRange range[3];
  for (int a = 0; a < 3; ++a) range[a] = interior_range(c, a, n);
  for (int lk = range[2].lo; lk <= range[2].hi; ++lk)
    for (int lj = range[1].lo; lj <= range[1].hi; ++lj)
      for (int li = range[0].lo; li <= range[0].hi; ++li) {
        double* out = &f.forcing[5 * f.at(li, lj, lk)];
        for (int m = 0; m < 5; ++m) out[m] = 0.0;
      }

  // Exact solution and the derived quantities along one whole grid line, by global index.
  std::vector<double> ue[5], buf[5], cuf(n), q(n);
  for (int m = 0; m < 5; ++m) ue[m].assign(n, 0.0), buf[m].assign(n, 0.0);

  for (int axis = 0; axis < 3; ++axis) {
    const FluxCoefficients fc = coefficients(k, axis);
    const int normal = axis + 1;                         // the momentum component along the line
    const int a1 = (axis + 1) % 3, a2 = (axis + 2) % 3;  // the transverse axes
    const int lo = c.low[axis] + range[axis].lo, hi = c.low[axis] + range[axis].hi;
    const int from = std::max(0, lo - 2), to = std::min(n - 1, hi + 2);
    for (int t2 = range[a2].lo; t2 <= range[a2].hi; ++t2)
      for (int t1 = range[a1].lo; t1 <= range[a1].hi; ++t1) {
        int local[3];
        local[a1] = t1;
        local[a2] = t2;
        double x[3];
        x[a1] = double(c.low[a1] + t1) * dn[a1];
        x[a2] = double(c.low[a2] + t2) * dn[a2];
        for (int g = from; g <= to; ++g) {
          x[axis] = double(g) * dn[axis];
          double e[5];
          npb_exact_solution(x[0], x[1], x[2], e);
          for (int m = 0; m < 5; ++m) ue[m][g] = e[m];
          const double dtpp = 1.0 / e[0];
          for (int m = 1; m < 5; ++m) buf[m][g] = dtpp * e[m];
          cuf[g] = buf[normal][g] * buf[normal][g];
          const int o1 = normal == 1 ? 2 : 1, o2 = normal == 3 ? 2 : 3;
          buf[0][g] = cuf[g] + buf[o1][g] * buf[o1][g] + buf[o2][g] * buf[o2][g];
          q[g] = 0.5 * (buf[1][g] * ue[1][g] + buf[2][g] * ue[2][g] + buf[3][g] * ue[3][g]);
        }
        for (int g = lo; g <= hi; ++g) {
          local[axis] = g - c.low[axis];
          double* out = &f.forcing[5 * f.at(local[0], local[1], local[2])];
          const int p = g + 1, m1 = g - 1;
          const double* bn = buf[normal].data();
          out[0] = out[0] - fc.t2 * (ue[normal][p] - ue[normal][m1]) +
                   fc.d[0] * (ue[0][p] - 2.0 * ue[0][g] + ue[0][m1]);
          for (int m = 1; m < 4; ++m) {
            if (m == normal) {
              out[m] = out[m] -
                       fc.t2 * ((ue[m][p] * bn[p] + k.c2 * (ue[4][p] - q[p])) -
                                (ue[m][m1] * bn[m1] + k.c2 * (ue[4][m1] - q[m1]))) +
                       fc.con1 * (buf[m][p] - 2.0 * buf[m][g] + buf[m][m1]) +
                       fc.d[m] * (ue[m][p] - 2.0 * ue[m][g] + ue[m][m1]);
            } else {
              out[m] = out[m] - fc.t2 * (ue[m][p] * bn[p] - ue[m][m1] * bn[m1]) +
                       fc.con2 * (buf[m][p] - 2.0 * buf[m][g] + buf[m][m1]) +
                       fc.d[m] * (ue[m][p] - 2.0 * ue[m][g] + ue[m][m1]);
            }
          }
          out[4] = out[4] -
                   fc.t2 * (bn[p] * (k.c1 * ue[4][p] - k.c2 * q[p]) - bn[m1] * (k.c1 * ue[4][m1] - k.c2 * q[m1])) +
                   0.5 * fc.con3 * (buf[0][p] - 2.0 * buf[0][g] + buf[0][m1]) +
                   fc.con4 * (cuf[p] - 2.0 * cuf[g] + cuf[m1]) + fc.con5 * (buf[4][p] - 2.0 * buf[4][g] + buf[4][m1]) +
                   fc.d[4] * (ue[4][p] - 2.0 * ue[4][g] + ue[4][m1]);
          for (int m = 0; m < 5; ++m) out[m] = out[m] - k.dssp * dissipation(ue[m].data(), g, n);
        }
      }
  }
  // Sign changed, and stored by component (compute_rhs reads one component along x).
  std::vector<double> planar(5 * f.cstride, 0.0);
  for (int lk = range[2].lo; lk <= range[2].hi; ++lk)
    for (int lj = range[1].lo; lj <= range[1].hi; ++lj)
      for (int li = range[0].lo; li <= range[0].hi; ++li) {
        const std::size_t p = f.at(li, lj, lk);
        for (int m = 0; m < 5; ++m) planar[m * f.cstride + p] = -1.0 * f.forcing[5 * p + m];
      }
  f.forcing.swap(planar);
}

}  // namespace nas::sp
