// nas/mg/stencils.cc: the MG stencils on one block (see stencils.h). Index i1 is the
// contiguous direction; every loop nest runs i3, i2 outside and i1 inside, with the
// sums along i2/i3 for a whole line computed first into scratch (as NPB does), so the
// innermost loops are unit-stride and vectorise.
#include "nas/mg/stencils.h"

#include <cmath>
#include <cstring>

#include "nas/common/vector_clones.h"

namespace nas::mg {
namespace {

// out[i] = a[i] + b[i] + c[i] + d[i]: the four-neighbour line sums. The scratch lines
// never overlap the grids, which the restrict qualifiers tell the vectoriser.
inline void add4(double* __restrict out, const double* __restrict a, const double* __restrict b,
                 const double* __restrict c, const double* __restrict d, int n) {
  for (int i = 0; i < n; ++i) out[i] = a[i] + b[i] + c[i] + d[i];
}

// The prolongation's sums of coarse neighbours along a line: z1 = next-in-2 + here,
// z2 = next-in-3 + here, z3 = next-in-2-and-3 + next-in-3 + z1.
inline void pair_sums(double* __restrict z1, double* __restrict z2, double* __restrict z3,
                      const double* __restrict here, const double* __restrict next2, const double* __restrict next3,
                      const double* __restrict next23, int n) {
  for (int i = 0; i < n; ++i) {
    z1[i] = next2[i] + here[i];
    z2[i] = next3[i] + here[i];
    z3[i] = next23[i] + next3[i] + z1[i];
  }
}

}  // namespace

NAS_CLONES_AVX2 void residual(const Grid3& u, const Grid3& v, const Grid3& r, const double a[4], LineScratch& scratch) {
  double* u1 = scratch.a.data();
  double* u2 = scratch.b.data();
  const int n1 = u.m1, n2 = u.m2, n3 = u.m3;
  const double a0 = a[0], a2 = a[2], a3 = a[3];  // a[1] is zero in NPB: its term is left out
  for (int i3 = 1; i3 < n3 - 1; ++i3) {
    for (int i2 = 1; i2 < n2 - 1; ++i2) {
      const double* um = u.line(i2 - 1, i3);
      const double* up = u.line(i2 + 1, i3);
      const double* ub = u.line(i2, i3 - 1);
      const double* uf = u.line(i2, i3 + 1);
      const double* umb = u.line(i2 - 1, i3 - 1);
      const double* upb = u.line(i2 + 1, i3 - 1);
      const double* umf = u.line(i2 - 1, i3 + 1);
      const double* upf = u.line(i2 + 1, i3 + 1);
      add4(u1, um, up, ub, uf, n1);
      add4(u2, umb, upb, umf, upf, n1);
      const double* uc = u.line(i2, i3);
      const double* vc = v.line(i2, i3);
      double* rc = r.line(i2, i3);
      for (int i1 = 1; i1 < n1 - 1; ++i1) {
        rc[i1] = vc[i1] - a0 * uc[i1] - a2 * (u2[i1] + u1[i1 - 1] + u1[i1 + 1]) - a3 * (u2[i1 - 1] + u2[i1 + 1]);
      }
    }
  }
}

NAS_CLONES_AVX2 void smooth(const Grid3& r, const Grid3& u, const double c[4], LineScratch& scratch) {
  double* r1 = scratch.a.data();
  double* r2 = scratch.b.data();
  const int n1 = r.m1, n2 = r.m2, n3 = r.m3;
  const double c0 = c[0], c1 = c[1], c2 = c[2];  // c[3] is zero in NPB: its term is left out
  for (int i3 = 1; i3 < n3 - 1; ++i3) {
    for (int i2 = 1; i2 < n2 - 1; ++i2) {
      const double* rm = r.line(i2 - 1, i3);
      const double* rp = r.line(i2 + 1, i3);
      const double* rb = r.line(i2, i3 - 1);
      const double* rf = r.line(i2, i3 + 1);
      const double* rmb = r.line(i2 - 1, i3 - 1);
      const double* rpb = r.line(i2 + 1, i3 - 1);
      const double* rmf = r.line(i2 - 1, i3 + 1);
      const double* rpf = r.line(i2 + 1, i3 + 1);
      add4(r1, rm, rp, rb, rf, n1);
      add4(r2, rmb, rpb, rmf, rpf, n1);
      const double* rc = r.line(i2, i3);
      double* uc = u.line(i2, i3);
      for (int i1 = 1; i1 < n1 - 1; ++i1) {
        uc[i1] = uc[i1] + c0 * rc[i1] + c1 * (rc[i1 - 1] + rc[i1 + 1] + r1[i1]) +
                 c2 * (r2[i1] + r1[i1 - 1] + r1[i1 + 1]);
      }
    }
  }
}

// Coarse interior point j (local index, 1..m-2) sits on fine local index 2j: the fine
// block is twice the coarse one and both start on a coarse point's left neighbour.
NAS_CLONES_AVX2 void restrict_to_coarse(const Grid3& r, const Grid3& s, LineScratch& scratch) {
  double* x1 = scratch.a.data();
  double* y1 = scratch.b.data();
  for (int j3 = 1; j3 < s.m3 - 1; ++j3) {
    const int i3 = 2 * j3;
    for (int j2 = 1; j2 < s.m2 - 1; ++j2) {
      const int i2 = 2 * j2;
      const double* rm = r.line(i2 - 1, i3);
      const double* rp = r.line(i2 + 1, i3);
      const double* rb = r.line(i2, i3 - 1);
      const double* rf = r.line(i2, i3 + 1);
      const double* rmb = r.line(i2 - 1, i3 - 1);
      const double* rmf = r.line(i2 - 1, i3 + 1);
      const double* rpb = r.line(i2 + 1, i3 - 1);
      const double* rpf = r.line(i2 + 1, i3 + 1);
      for (int j1 = 1; j1 < s.m1; ++j1) {
        const int i = 2 * j1 - 1;
        x1[i] = rm[i] + rp[i] + rb[i] + rf[i];
        y1[i] = rmb[i] + rmf[i] + rpb[i] + rpf[i];
      }
      const double* rc = r.line(i2, i3);
      double* sc = s.line(j2, j3);
      for (int j1 = 1; j1 < s.m1 - 1; ++j1) {
        const int i1 = 2 * j1;
        const double y2 = rmb[i1] + rmf[i1] + rpb[i1] + rpf[i1];
        const double x2 = rm[i1] + rp[i1] + rb[i1] + rf[i1];
        sc[j1] = 0.5 * rc[i1] + 0.25 * (rc[i1 - 1] + rc[i1 + 1] + x2) + 0.125 * (x1[i1 - 1] + x1[i1 + 1] + y2) +
                 0.0625 * (y1[i1 - 1] + y1[i1 + 1]);
      }
    }
  }
}

// Coarse local index c (ghosts included) maps onto fine local index 2c, and the fine
// point 2c+1 lies between coarse c and c+1; so coarse 0..m-1 cover fine 0..n-1.
void prolongate_add(const Grid3& z, const Grid3& u, LineScratch& scratch) {
  double* z1 = scratch.a.data();
  double* z2 = scratch.b.data();
  double* z3 = scratch.c.data();
  const int mm1 = z.m1, mm2 = z.m2, mm3 = z.m3;
  for (int c3 = 0; c3 < mm3 - 1; ++c3) {
    for (int c2 = 0; c2 < mm2 - 1; ++c2) {
      const double* zc = z.line(c2, c3);
      const double* zn = z.line(c2 + 1, c3);       // next in 2
      const double* zf = z.line(c2, c3 + 1);       // next in 3
      const double* znf = z.line(c2 + 1, c3 + 1);  // next in 2 and 3
      pair_sums(z1, z2, z3, zc, zn, zf, znf, mm1);
      double* u00 = u.line(2 * c2, 2 * c3);
      double* u10 = u.line(2 * c2 + 1, 2 * c3);
      double* u01 = u.line(2 * c2, 2 * c3 + 1);
      double* u11 = u.line(2 * c2 + 1, 2 * c3 + 1);
      for (int c1 = 0; c1 < mm1 - 1; ++c1) {
        u00[2 * c1] = u00[2 * c1] + zc[c1];
        u00[2 * c1 + 1] = u00[2 * c1 + 1] + 0.5 * (zc[c1 + 1] + zc[c1]);
      }
      for (int c1 = 0; c1 < mm1 - 1; ++c1) {
        u10[2 * c1] = u10[2 * c1] + 0.5 * z1[c1];
        u10[2 * c1 + 1] = u10[2 * c1 + 1] + 0.25 * (z1[c1] + z1[c1 + 1]);
      }
      for (int c1 = 0; c1 < mm1 - 1; ++c1) {
        u01[2 * c1] = u01[2 * c1] + 0.5 * z2[c1];
        u01[2 * c1 + 1] = u01[2 * c1 + 1] + 0.25 * (z2[c1] + z2[c1 + 1]);
      }
      for (int c1 = 0; c1 < mm1 - 1; ++c1) {
        u11[2 * c1] = u11[2 * c1] + 0.25 * z3[c1];
        u11[2 * c1 + 1] = u11[2 * c1 + 1] + 0.125 * (z3[c1] + z3[c1 + 1]);
      }
    }
  }
}

LocalNorms local_norms(const Grid3& r) {
  LocalNorms norms;
  for (int i3 = 1; i3 < r.m3 - 1; ++i3) {
    for (int i2 = 1; i2 < r.m2 - 1; ++i2) {
      const double* line = r.line(i2, i3);
      for (int i1 = 1; i1 < r.m1 - 1; ++i1) {
        norms.sum_of_squares += line[i1] * line[i1];
        const double magnitude = std::fabs(line[i1]);
        if (magnitude > norms.max_abs) norms.max_abs = magnitude;
      }
    }
  }
  return norms;
}

void zero(const Grid3& g) { std::memset(g.data, 0, g.size() * sizeof(double)); }

}  // namespace nas::mg
