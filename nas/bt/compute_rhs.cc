// nas/bt/compute_rhs.cc: the flux and dissipation stencils of compute_rhs, one template
// per direction so offsets and component numbers are compile-time constants. Every rhs
// element receives its updates in NPB's order (forcing, xi flux, xi dissipation, eta
// flux, eta dissipation, zeta flux, zeta dissipation, times dt), each written as NPB
// writes it, so the results are the serial code's bit for bit.
#include "nas/bt/compute_rhs.h"

#include <cstddef>

#include "nas/common/vector_clones.h"

namespace nas::bt {

namespace {

// Local index range [lo, hi] (inclusive) of a cell's points along each axis, clipped to
// the global interior 1..n-2 or to the cell plus its ghosts.
struct Box {
  int lo[3], hi[3];
};

Box interior_box(const Cell& c, int n) {
  Box b;
  for (int a = 0; a < 3; ++a) {
    const int s = c.extent.start[a], size = c.extent.size[a];
    b.lo[a] = s >= 1 ? 0 : 1 - s;
    b.hi[a] = s + size - 1 <= n - 2 ? size - 1 : n - 2 - s;
  }
  return b;
}

// rho_i, us, vs, ws, square and qs over a box of points.
void derived(Cell& c, const Box& b) {
  const double* u = c.u.data();
  for (int k = b.lo[2]; k <= b.hi[2]; ++k)
    for (int j = b.lo[1]; j <= b.hi[1]; ++j) {
      const std::ptrdiff_t p0 = c.at(0, j, k);
      for (int i = b.lo[0]; i <= b.hi[0]; ++i) {
        const std::ptrdiff_t p = p0 + i;
        const double* up = u + 5 * p;
        const double rho_inv = 1.0 / up[0];
        c.rho_i[p] = rho_inv;
        c.us[p] = up[1] * rho_inv;
        c.vs[p] = up[2] * rho_inv;
        c.ws[p] = up[3] * rho_inv;
        c.square[p] = 0.5 * (up[1] * up[1] + up[2] * up[2] + up[3] * up[3]) * rho_inv;
        c.qs[p] = c.square[p] * rho_inv;
      }
    }
}

// The derived quantities on the cell and on the ghost layer one deep on each face that
// has a neighbour (the flux stencils and the line solves read them there).
void derived_with_faces(Cell& c, int n) {
  Box cell;
  for (int a = 0; a < 3; ++a) {
    cell.lo[a] = 0;
    cell.hi[a] = c.extent.size[a] - 1;
  }
  derived(c, cell);
  for (int a = 0; a < 3; ++a) {
    if (c.extent.start[a] > 0) {
      Box slab = cell;
      slab.lo[a] = slab.hi[a] = -1;
      derived(c, slab);
    }
    if (c.extent.start[a] + c.extent.size[a] < n) {
      Box slab = cell;
      slab.lo[a] = slab.hi[a] = c.extent.size[a];
      derived(c, slab);
    }
  }
}

// Flux differences along axis A at the points of box b.
template <int A>
void fluxes(Cell& c, const Constants& k, const Box& b) {
  constexpr int d = A + 1;  // momentum component along A
  const std::ptrdiff_t o = c.stride[A];
  const double* u = c.u.data();
  double* rhs = c.rhs.data();
  const double* vel[4] = {nullptr, c.us.data(), c.vs.data(), c.ws.data()};
  const double* vd = vel[d];
  const double* sq = c.square.data();
  const double* qs = c.qs.data();
  const double* rho = c.rho_i.data();
  const double t2 = k.t2[A], c1 = k.c1, c2 = k.c2;
  const double* dtd1 = k.dtd1[A];
  const double con1 = k.con[A][1], con2 = k.con[A][2], con3 = k.con[A][3], con4 = k.con[A][4];
  const double con1_43 = con1 * k.con43;
  for (int kk = b.lo[2]; kk <= b.hi[2]; ++kk)
    for (int j = b.lo[1]; j <= b.hi[1]; ++j) {
      const std::ptrdiff_t row = c.at(0, j, kk);
      for (int i = b.lo[0]; i <= b.hi[0]; ++i) {
        const std::ptrdiff_t p = row + i;
        const double* uc = u + 5 * p;
        const double* up = u + 5 * (p + o);
        const double* um = u + 5 * (p - o);
        double* r = rhs + 5 * p;
        const double vijk = vd[p], vp1 = vd[p + o], vm1 = vd[p - o];
        r[0] = r[0] + dtd1[0] * (up[0] - 2.0 * uc[0] + um[0]) - t2 * (up[d] - um[d]);
        for (int m = 1; m < 4; ++m) {
          if (m == d) {
            r[m] = r[m] + dtd1[m] * (up[m] - 2.0 * uc[m] + um[m]) + con1_43 * (vp1 - 2.0 * vijk + vm1) -
                   t2 * (up[m] * vp1 - um[m] * vm1 + (up[4] - sq[p + o] - um[4] + sq[p - o]) * c2);
          } else {
            const double* vm = vel[m];
            r[m] = r[m] + dtd1[m] * (up[m] - 2.0 * uc[m] + um[m]) + con1 * (vm[p + o] - 2.0 * vm[p] + vm[p - o]) -
                   t2 * (up[m] * vp1 - um[m] * vm1);
          }
        }
        r[4] = r[4] + dtd1[4] * (up[4] - 2.0 * uc[4] + um[4]) + con2 * (qs[p + o] - 2.0 * qs[p] + qs[p - o]) +
               con3 * (vp1 * vp1 - 2.0 * vijk * vijk + vm1 * vm1) +
               con4 * (up[4] * rho[p + o] - 2.0 * uc[4] * rho[p] + um[4] * rho[p - o]) -
               t2 * ((c1 * up[4] - c2 * sq[p + o]) * vp1 - (c1 * um[4] - c2 * sq[p - o]) * vm1);
      }
    }
}

// Fourth-order dissipation along axis A at the points of box b whose coordinate along A
// is in [lo, hi]: the general five-point stencil, or NPB's one-sided forms next to the
// boundary (coefficients w of points -2..+2; zero weights add exact zeros).
template <int A>
void dissipation(Cell& c, double dssp, Box b, int lo, int hi, const double* w) {
  b.lo[A] = lo;
  b.hi[A] = hi;
  if (lo > hi) return;
  const std::ptrdiff_t o = 5 * c.stride[A];
  const double* u = c.u.data();
  double* rhs = c.rhs.data();
  for (int kk = b.lo[2]; kk <= b.hi[2]; ++kk)
    for (int j = b.lo[1]; j <= b.hi[1]; ++j) {
      const std::ptrdiff_t row = 5 * c.at(0, j, kk);
      for (int i = b.lo[0]; i <= b.hi[0]; ++i) {
        const double* uc = u + row + 5 * i;
        double* r = rhs + row + 5 * i;
        if (w == nullptr) {
          for (int m = 0; m < 5; ++m)
            r[m] = r[m] - dssp * (uc[m - 2 * o] - 4.0 * uc[m - o] + 6.0 * uc[m] - 4.0 * uc[m + o] + uc[m + 2 * o]);
        } else {
          for (int m = 0; m < 5; ++m)
            r[m] = r[m] - dssp * (w[0] * uc[m - 2 * o] + w[1] * uc[m - o] + w[2] * uc[m] + w[3] * uc[m + o] +
                                  w[4] * uc[m + 2 * o]);
        }
      }
    }
}

template <int A>
void direction(Cell& c, const Constants& k, const Box& b) {
  fluxes<A>(c, k, b);
  // NPB's stencils at global points 1, 2, n-3, n-2; the general one in between.
  static constexpr double kFirst[5] = {0.0, 0.0, 5.0, -4.0, 1.0};
  static constexpr double kSecond[5] = {0.0, -4.0, 6.0, -4.0, 1.0};
  static constexpr double kThirdLast[5] = {1.0, -4.0, 6.0, -4.0, 0.0};
  static constexpr double kSecondLast[5] = {1.0, -4.0, 5.0, 0.0, 0.0};
  const int n = k.n, s = c.extent.start[A];
  auto clip_lo = [&](int g) { return g - s < b.lo[A] ? b.lo[A] : g - s; };
  auto clip_hi = [&](int g) { return g - s > b.hi[A] ? b.hi[A] : g - s; };
  auto single = [&](int g, const double* w) {
    if (g - s >= b.lo[A] && g - s <= b.hi[A]) dissipation<A>(c, k.dssp, b, g - s, g - s, w);
  };
  single(1, kFirst);
  single(2, kSecond);
  dissipation<A>(c, k.dssp, b, clip_lo(3), clip_hi(n - 4), nullptr);
  single(n - 3, kThirdLast);
  single(n - 2, kSecondLast);
}

}  // namespace

NAS_CLONES_AVX512 void compute_rhs(Cell& c, const Constants& k) {
  derived_with_faces(c, k.n);
  const CellExtent& e = c.extent;
  for (int kk = 0; kk < e.size[2]; ++kk)
    for (int j = 0; j < e.size[1]; ++j) {
      const std::ptrdiff_t row = 5 * c.at(0, j, kk);
      for (int i = 0; i < 5 * e.size[0]; ++i) c.rhs[row + i] = c.forcing[row + i];
    }
  const Box b = interior_box(c, k.n);
  direction<0>(c, k, b);
  direction<1>(c, k, b);
  direction<2>(c, k, b);
  const double dt = k.dt;
  for (int kk = b.lo[2]; kk <= b.hi[2]; ++kk)
    for (int j = b.lo[1]; j <= b.hi[1]; ++j) {
      double* r = c.rhs.data() + 5 * c.at(0, j, kk);
      for (int i = 5 * b.lo[0]; i < 5 * (b.hi[0] + 1); ++i) r[i] = r[i] * dt;
    }
}

}  // namespace nas::bt
