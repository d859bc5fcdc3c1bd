// nas/bt/initial_fields.cc: NPB BT's initialize and exact_rhs on one cell. The forcing
// term is built line by line in each direction from the exact solution sampled at the
// cell's points and two points either side (no communication needed), with the same
// operation order as NPB so the forcing is bit-identical whatever the decomposition.
#include "nas/bt/initial_fields.h"

#include <algorithm>
#include <vector>

namespace nas::bt {

void initialize(Cell& cell, const Constants& k) {
  const CellExtent& e = cell.extent;
  const int n = k.n;
  for (int kk = 0; kk < e.size[2]; ++kk) {
    const int gk = e.start[2] + kk;
    const double zeta = double(gk) * k.dnm1[2];
    for (int j = 0; j < e.size[1]; ++j) {
      const int gj = e.start[1] + j;
      const double eta = double(gj) * k.dnm1[1];
      for (int i = 0; i < e.size[0]; ++i) {
        const int gi = e.start[0] + i;
        const double xi = double(gi) * k.dnm1[0];
        double* u = &cell.u[5 * cell.at(i, j, kk)];
        double pface[2][3][5];
        for (int s = 0; s < 2; ++s) {
          npb_exact_solution(double(s), eta, zeta, pface[s][0]);
          npb_exact_solution(xi, double(s), zeta, pface[s][1]);
          npb_exact_solution(xi, eta, double(s), pface[s][2]);
        }
        for (int m = 0; m < 5; ++m) {
          const double pxi = xi * pface[1][0][m] + (1.0 - xi) * pface[0][0][m];
          const double peta = eta * pface[1][1][m] + (1.0 - eta) * pface[0][1][m];
          const double pzeta = zeta * pface[1][2][m] + (1.0 - zeta) * pface[0][2][m];
          u[m] = pxi + peta + pzeta - pxi * peta - pxi * pzeta - peta * pzeta + pxi * peta * pzeta;
        }
        // Boundary points take the exact solution. NPB sets the six faces in the order
        // west, east, south, north, bottom, top, each with the exact coordinate 0 or 1
        // across its face and the computed ones along it; on edges the last one wins.
        const bool boundary = gi == 0 || gi == n - 1 || gj == 0 || gj == n - 1 || gk == 0 || gk == n - 1;
        if (boundary) {
          double bxi = xi, beta = eta, bzeta = zeta;
          if (gk == 0 || gk == n - 1) bzeta = gk == 0 ? 0.0 : 1.0;
          else if (gj == 0 || gj == n - 1) beta = gj == 0 ? 0.0 : 1.0;
          else bxi = gi == 0 ? 0.0 : 1.0;
          npb_exact_solution(bxi, beta, bzeta, u);
        }
      }
    }
  }
}

namespace {

// One direction's contribution to the forcing along the line of global points
// 0..n-1 through (fixed other coordinates); writes the cell's points of that line.
// axis: direction of the line; lo/count: the cell's points on it; xyz: coordinates
// of the line (the entry for axis is overwritten); out(l) -> forcing of cell point l.
template <typename Out>
void forcing_line(const Constants& k, int axis, int lo, int count, double xyz[3], Out out) {
  const int n = k.n;
  const int first = lo - 2 < 0 ? 0 : lo - 2;
  const int last = lo + count + 1 > n - 1 ? n - 1 : lo + count + 1;
  std::vector<double> ue(5 * n), buf(5 * n), cuf(n), q(n);
  const int d = axis + 1;  // the momentum component along the line
  const int e1 = d == 1 ? 2 : 1, e2 = d == 3 ? 2 : 3;
  for (int g = first; g <= last; ++g) {
    xyz[axis] = double(g) * k.dnm1[axis];
    double dtemp[5];
    npb_exact_solution(xyz[0], xyz[1], xyz[2], dtemp);
    for (int m = 0; m < 5; ++m) ue[5 * g + m] = dtemp[m];
    const double dtpp = 1.0 / dtemp[0];
    for (int m = 1; m < 5; ++m) buf[5 * g + m] = dtpp * dtemp[m];
    cuf[g] = buf[5 * g + d] * buf[5 * g + d];
    buf[5 * g + 0] = cuf[g] + buf[5 * g + e1] * buf[5 * g + e1] + buf[5 * g + e2] * buf[5 * g + e2];
    q[g] = 0.5 * (buf[5 * g + 1] * ue[5 * g + 1] + buf[5 * g + 2] * ue[5 * g + 2] + buf[5 * g + 3] * ue[5 * g + 3]);
  }
  const double t2 = k.t2[axis];
  const double* dtd1 = k.dtd1[axis];
  const double* con = k.con[axis];
  auto UE = [&](int m, int g) { return ue[5 * g + m]; };
  auto BUF = [&](int m, int g) { return buf[5 * g + m]; };
  for (int l = 0; l < count; ++l) {
    const int g = lo + l;
    if (g < 1 || g > n - 2) continue;
    const int gm = g - 1, gp = g + 1;
    double* f = out(l);
    f[0] = f[0] - t2 * (UE(d, gp) - UE(d, gm)) + dtd1[0] * (UE(0, gp) - 2.0 * UE(0, g) + UE(0, gm));
    for (int m = 1; m < 4; ++m) {
      if (m == d) {
        f[m] = f[m] -
               t2 * ((UE(m, gp) * BUF(d, gp) + k.c2 * (UE(4, gp) - q[gp])) -
                     (UE(m, gm) * BUF(d, gm) + k.c2 * (UE(4, gm) - q[gm]))) +
               con[0] * (BUF(m, gp) - 2.0 * BUF(m, g) + BUF(m, gm)) +
               dtd1[m] * (UE(m, gp) - 2.0 * UE(m, g) + UE(m, gm));
      } else {
        f[m] = f[m] - t2 * (UE(m, gp) * BUF(d, gp) - UE(m, gm) * BUF(d, gm)) +
               con[1] * (BUF(m, gp) - 2.0 * BUF(m, g) + BUF(m, gm)) +
               dtd1[m] * (UE(m, gp) - 2.0 * UE(m, g) + UE(m, gm));
      }
    }
    f[4] = f[4] -
           t2 * (BUF(d, gp) * (k.c1 * UE(4, gp) - k.c2 * q[gp]) - BUF(d, gm) * (k.c1 * UE(4, gm) - k.c2 * q[gm])) +
           0.5 * con[2] * (BUF(0, gp) - 2.0 * BUF(0, g) + BUF(0, gm)) + con[3] * (cuf[gp] - 2.0 * cuf[g] + cuf[gm]) +
           con[4] * (BUF(4, gp) - 2.0 * BUF(4, g) + BUF(4, gm)) + dtd1[4] * (UE(4, gp) - 2.0 * UE(4, g) + UE(4, gm));
  }
  // Fourth-order dissipation.
  const double dssp = k.dssp;
  for (int l = 0; l < count; ++l) {
    const int g = lo + l;
    if (g < 1 || g > n - 2) continue;
    double* f = out(l);
    for (int m = 0; m < 5; ++m) {
      double s;
      if (g == 1) s = 5.0 * UE(m, g) - 4.0 * UE(m, g + 1) + UE(m, g + 2);
      else if (g == 2) s = -4.0 * UE(m, g - 1) + 6.0 * UE(m, g) - 4.0 * UE(m, g + 1) + UE(m, g + 2);
      else if (g == n - 3) s = UE(m, g - 2) - 4.0 * UE(m, g - 1) + 6.0 * UE(m, g) - 4.0 * UE(m, g + 1);
      else if (g == n - 2) s = UE(m, g - 2) - 4.0 * UE(m, g - 1) + 5.0 * UE(m, g);
      else s = UE(m, g - 2) - 4.0 * UE(m, g - 1) + 6.0 * UE(m, g) - 4.0 * UE(m, g + 1) + UE(m, g + 2);
      f[m] = f[m] - dssp * s;
    }
  }
}

}  // namespace

void exact_rhs(Cell& cell, const Constants& k) {
  const CellExtent& e = cell.extent;
  const int n = k.n;
  std::fill(cell.forcing.begin(), cell.forcing.end(), 0.0);
  auto interior = [n](int g) { return g >= 1 && g <= n - 2; };
  // xi, eta, zeta directions in NPB's order (each point gets its updates in that order).
  for (int axis = 0; axis < 3; ++axis) {
    const int a1 = axis == 0 ? 1 : 0, a2 = axis == 2 ? 1 : 2;  // the two other axes
    for (int l2 = 0; l2 < e.size[a2]; ++l2) {
      for (int l1 = 0; l1 < e.size[a1]; ++l1) {
        const int g1 = e.start[a1] + l1, g2 = e.start[a2] + l2;
        if (!interior(g1) || !interior(g2)) continue;
        double xyz[3];
        xyz[a1] = double(g1) * k.dnm1[a1];
        xyz[a2] = double(g2) * k.dnm1[a2];
        forcing_line(k, axis, e.start[axis], e.size[axis], xyz, [&](int l) {
          int ijk[3];
          ijk[axis] = l;
          ijk[a1] = l1;
          ijk[a2] = l2;
          return &cell.forcing[5 * cell.at(ijk[0], ijk[1], ijk[2])];
        });
      }
    }
  }
  for (int kk = 0; kk < e.size[2]; ++kk)
    for (int j = 0; j < e.size[1]; ++j)
      for (int i = 0; i < e.size[0]; ++i) {
        if (!interior(e.start[0] + i) || !interior(e.start[1] + j) || !interior(e.start[2] + kk)) continue;
        double* f = &cell.forcing[5 * cell.at(i, j, kk)];
        for (int m = 0; m < 5; ++m) f[m] = -1.0 * f[m];
      }
}

}  // namespace nas::bt
