// nas/bt/line_solver.cc: Jacobians, block assembly, elimination and back substitution
// of one line segment (see line_solver.h). The Jacobian entries are written as NPB
// writes them for each direction (the association of products differs slightly between
// NPB's x, y and z versions; it is kept so the results match the reference bit for bit).
#include "nas/bt/line_solver.h"

#include <cstddef>
#include <cstring>

#include "nas/bt/block_ops.h"
#include "nas/common/vector_clones.h"

namespace nas::bt {

namespace {
inline double& at(double* blk, int r, int c) { return blk[5 * c + r]; }
}  // namespace

template <int A>
LineSolver<A>::LineSolver(const Constants& k, int max_points)
    : k_(k), fj_(25 * (max_points + 2)), nj_(25 * (max_points + 2)) {}

template <int A>
NAS_CLONES_AVX512 void LineSolver<A>::jacobians(const double* u, double qs, double square, double tmp1, double* f,
                                                double* n) const {
  const double c1 = k_.c1, c2 = k_.c2, c3c4 = k_.c3c4, c1345 = k_.c1345, con43 = k_.con43;
  const double tmp2 = tmp1 * tmp1, tmp3 = tmp1 * tmp2;
  for (int i = 0; i < 25; ++i) f[i] = n[i] = 0.0;
  const double u0 = u[0], u1 = u[1], u2 = u[2], u3 = u[3], u4 = u[4];
  if constexpr (A == 0) {
    at(f, 0, 1) = 1.0;
    at(f, 1, 0) = -(u1 * tmp2 * u1) + c2 * qs;
    at(f, 1, 1) = (2.0 - c2) * (u1 / u0);
    at(f, 1, 2) = -c2 * (u2 * tmp1);
    at(f, 1, 3) = -c2 * (u3 * tmp1);
    at(f, 1, 4) = c2;
    at(f, 2, 0) = -(u1 * u2) * tmp2;
    at(f, 2, 1) = u2 * tmp1;
    at(f, 2, 2) = u1 * tmp1;
    at(f, 3, 0) = -(u1 * u3) * tmp2;
    at(f, 3, 1) = u3 * tmp1;
    at(f, 3, 3) = u1 * tmp1;
    at(f, 4, 0) = (c2 * 2.0 * square - c1 * u4) * (u1 * tmp2);
    at(f, 4, 1) = c1 * u4 * tmp1 - c2 * (u1 * u1 * tmp2 + qs);
    at(f, 4, 2) = -c2 * (u2 * u1) * tmp2;
    at(f, 4, 3) = -c2 * (u3 * u1) * tmp2;
    at(f, 4, 4) = c1 * (u1 * tmp1);
  } else if constexpr (A == 1) {
    at(f, 0, 2) = 1.0;
    at(f, 1, 0) = -(u1 * u2) * tmp2;
    at(f, 1, 1) = u2 * tmp1;
    at(f, 1, 2) = u1 * tmp1;
    at(f, 2, 0) = -(u2 * u2 * tmp2) + c2 * qs;
    at(f, 2, 1) = -c2 * u1 * tmp1;
    at(f, 2, 2) = (2.0 - c2) * u2 * tmp1;
    at(f, 2, 3) = -c2 * u3 * tmp1;
    at(f, 2, 4) = c2;
    at(f, 3, 0) = -(u2 * u3) * tmp2;
    at(f, 3, 2) = u3 * tmp1;
    at(f, 3, 3) = u2 * tmp1;
    at(f, 4, 0) = (c2 * 2.0 * square - c1 * u4) * u2 * tmp2;
    at(f, 4, 1) = -c2 * u1 * u2 * tmp2;
    at(f, 4, 2) = c1 * u4 * tmp1 - c2 * (qs + u2 * u2 * tmp2);
    at(f, 4, 3) = -c2 * (u2 * u3) * tmp2;
    at(f, 4, 4) = c1 * u2 * tmp1;
  } else {
    at(f, 0, 3) = 1.0;
    at(f, 1, 0) = -(u1 * u3) * tmp2;
    at(f, 1, 1) = u3 * tmp1;
    at(f, 1, 3) = u1 * tmp1;
    at(f, 2, 0) = -(u2 * u3) * tmp2;
    at(f, 2, 2) = u3 * tmp1;
    at(f, 2, 3) = u2 * tmp1;
    at(f, 3, 0) = -(u3 * u3 * tmp2) + c2 * qs;
    at(f, 3, 1) = -c2 * u1 * tmp1;
    at(f, 3, 2) = -c2 * u2 * tmp1;
    at(f, 3, 3) = (2.0 - c2) * u3 * tmp1;
    at(f, 3, 4) = c2;
    at(f, 4, 0) = (c2 * 2.0 * square - c1 * u4) * u3 * tmp2;
    at(f, 4, 1) = -c2 * (u1 * u3) * tmp2;
    at(f, 4, 2) = -c2 * (u2 * u3) * tmp2;
    at(f, 4, 3) = c1 * (u4 * tmp1) - c2 * (qs + u3 * u3 * tmp2);
    at(f, 4, 4) = c1 * u3 * tmp1;
  }
  // Viscous Jacobian: the component along the line has the 4/3 factor.
  const double coef[4] = {0.0, A == 0 ? con43 * c3c4 : c3c4, A == 1 ? con43 * c3c4 : c3c4,
                          A == 2 ? con43 * c3c4 : c3c4};
  const double uu[4] = {u0, u1, u2, u3};
  for (int m = 1; m < 4; ++m) {
    at(n, m, 0) = -coef[m] * tmp2 * uu[m];
    at(n, m, m) = coef[m] * tmp1;
  }
  if constexpr (A == 2) at(n, 3, 3) = con43 * k_.c3 * k_.c4 * tmp1;
  at(n, 4, 0) = -(coef[1] - c1345) * tmp3 * (u1 * u1) - (coef[2] - c1345) * tmp3 * (u2 * u2) -
                (coef[3] - c1345) * tmp3 * (u3 * u3) - c1345 * tmp2 * u4;
  for (int m = 1; m < 4; ++m) at(n, 4, m) = (coef[m] - c1345) * tmp2 * uu[m];
  at(n, 4, 4) = c1345 * tmp1;
}

namespace {

// The point index of local (l, l1, l2) with l along axis A.
template <int A>
std::ptrdiff_t point(const Cell& c, int l, int l1, int l2) {
  if constexpr (A == 0) return c.at(l, l1, l2);
  else if constexpr (A == 1) return c.at(l1, l, l2);
  else return c.at(l1, l2, l);
}

}  // namespace

template <int A>
NAS_CLONES_AVX512 void LineSolver<A>::forward(Cell& c, int l1, int l2, double* cstore, const double* carry_in,
                                              double* carry_out) {
  const int n = c.extent.size[A], start = c.extent.start[A], last_global = k_.n - 1;
  const std::ptrdiff_t p0 = point<A>(c, 0, l1, l2), step = c.stride[A];
  // Jacobians at the segment's points and one beyond each end (inside the grid).
  const int jlo = start == 0 ? 0 : -1, jhi = start + n - 1 == last_global ? n - 1 : n;
  for (int l = jlo; l <= jhi; ++l) {
    const std::ptrdiff_t p = p0 + l * step;
    jacobians(&c.u[5 * p], c.qs[p], c.square[p], c.rho_i[p], &fj_[25 * (l + 1)], &nj_[25 * (l + 1)]);
  }
  const double tmp1 = k_.dt * k_.t1[A], tmp2 = k_.dt * k_.t2[A];
  const double* d = k_.d[A];
  double* rhs = c.rhs.data();
  const double* prev_c = carry_in;
  const double* prev_r = carry_in ? carry_in + 25 : nullptr;
  double a[25], b[25];
  for (int l = 0; l < n; ++l) {
    const int g = start + l;
    double* cl = cstore + 25 * l;
    double* r = rhs + 5 * (p0 + l * step);
    if (g == 0 || g == last_global) {
      // Identity row: r stays, C' = 0 (what NPB's eliminations of it compute).
      std::memset(cl, 0, 25 * sizeof(double));
    } else {
      const double* fm = &fj_[25 * l];
      const double* nm = &nj_[25 * l];
      const double* nc = &nj_[25 * (l + 1)];
      const double* fp = &fj_[25 * (l + 2)];
      const double* np = &nj_[25 * (l + 2)];
      for (int col = 0; col < 5; ++col)
        for (int row = 0; row < 5; ++row) {
          const int e = 5 * col + row;
          if (row == col) {
            a[e] = -tmp2 * fm[e] - tmp1 * nm[e] - tmp1 * d[row];
            b[e] = 1.0 + tmp1 * 2.0 * nc[e] + tmp1 * 2.0 * d[row];
            cl[e] = tmp2 * fp[e] - tmp1 * np[e] - tmp1 * d[row];
          } else {
            a[e] = -tmp2 * fm[e] - tmp1 * nm[e];
            b[e] = tmp1 * 2.0 * nc[e];
            cl[e] = tmp2 * fp[e] - tmp1 * np[e];
          }
        }
      // g >= 1 always has a predecessor (point 0 is in this cell or the previous one).
      matvec_sub(a, prev_r, r);
      matmul_sub(a, prev_c, b);
      binvcrhs(b, cl, r);
    }
    prev_c = cl;
    prev_r = r;
  }
  if (carry_out) {
    std::memcpy(carry_out, prev_c, 25 * sizeof(double));
    std::memcpy(carry_out + 25, prev_r, 5 * sizeof(double));
  }
}

template <int A>
NAS_CLONES_AVX512 void LineSolver<A>::backward(Cell& c, int l1, int l2, const double* cstore, const double* next,
                                               double* first_out) {
  const int n = c.extent.size[A], start = c.extent.start[A], last_global = k_.n - 1;
  const std::ptrdiff_t p0 = point<A>(c, 0, l1, l2), step = c.stride[A];
  double* rhs = c.rhs.data();
  const double* v = next;
  for (int l = n - 1; l >= 0; --l) {
    const int g = start + l;
    double* r = rhs + 5 * (p0 + l * step);
    if (g != 0 && g != last_global) backsub(cstore + 25 * l, v, r);
    v = r;
  }
  if (first_out) std::memcpy(first_out, rhs + 5 * p0, 5 * sizeof(double));
}

template class LineSolver<0>;
template class LineSolver<1>;
template class LineSolver<2>;

}  // namespace nas::bt
