// nas/lu/flux_operator.cc: the spatial operator along lines of points (see
// flux_operator.h). Each direction is the same 1-D operator with its own metric
// coefficients and its own momentum component, applied x first, then y, then z, so every
// point accumulates its terms in the same order as NPB's rhs.
#include "nas/lu/flux_operator.h"

#include <algorithm>

namespace nas::lu {

struct FluxOperator::Direction {
  double t1, t2, t3;
  double d[5];
};

FluxOperator::FluxOperator(const LocalFields& fields, const Coefficients& coefficients) : f_(fields), c_(coefficients) {
  const int longest = std::max({fields.nxa, fields.nya, fields.nz0});
  u_.resize(5 * longest);
  rho_.resize(longest);
  q_.resize(longest);
  out_.resize(5 * longest);
  flux_.resize(5 * longest);
}

void FluxOperator::kinetic_terms(const double* field, double* rho_i, double* qs) const {
  const std::size_t points = std::size_t(f_.nz0) * f_.nya * f_.nxa;
  for (std::size_t p = 0; p < points; ++p) {
    const double* v = field + 5 * p;
    const double tmp = 1.0 / v[0];
    rho_i[p] = tmp;
    qs[p] = 0.50 * (v[1] * v[1] + v[2] * v[2] + v[3] * v[3]) * tmp;
  }
}

template <int N>
void FluxOperator::line(const Direction& dir, const double* field, const double* rho_i, const double* qs, double* out,
                        std::size_t first_point, std::size_t stride, int count, int lo, int hi, int global_first,
                        int global_points) {
  const int a = std::max(0, lo - 2), b = std::min(count - 1, hi + 2);
  double* U = u_.data();
  double* R = rho_.data();
  double* Q = q_.data();
  double* O = out_.data();
  double* F = flux_.data();
  for (int p = a; p <= b; ++p) {
    const std::size_t s = first_point + std::size_t(p) * stride;
    for (int m = 0; m < 5; ++m) U[5 * p + m] = field[5 * s + m];
    R[p] = rho_i[s];
    Q[p] = qs[s];
  }
  for (int p = lo; p <= hi; ++p) {
    const std::size_t s = first_point + std::size_t(p) * stride;
    for (int m = 0; m < 5; ++m) O[5 * p + m] = out[5 * s + m];
  }
  constexpr int n = N;
  constexpr double C1 = kC1, C2 = kC2, C3 = kC3, C4 = kC4, C5 = kC5;

  // Inviscid (convective) flux and its central difference.
  for (int p = lo - 1; p <= hi + 1; ++p) {
    const double* v = U + 5 * p;
    double* fl = F + 5 * p;
    const double un = v[n] * R[p];
    const double q = Q[p];
    fl[0] = v[n];
    for (int m = 1; m <= 3; ++m) fl[m] = v[m] * un;
    fl[n] = v[n] * un + C2 * (v[4] - q);
    fl[4] = (C1 * v[4] - C2 * q) * un;
  }
  for (int p = lo; p <= hi; ++p)
    for (int m = 0; m < 5; ++m) O[5 * p + m] = O[5 * p + m] - dir.t2 * (F[5 * (p + 1) + m] - F[5 * (p - 1) + m]);

  // Viscous flux between p-1 and p.
  for (int p = lo; p <= hi + 1; ++p) {
    const double* v = U + 5 * p;
    const double* w = U + 5 * (p - 1);
    double tmp = R[p];
    const double u21 = tmp * v[1], u31 = tmp * v[2], u41 = tmp * v[3], u51 = tmp * v[4];
    tmp = R[p - 1];
    const double u21m = tmp * w[1], u31m = tmp * w[2], u41m = tmp * w[3], u51m = tmp * w[4];
    const double un = n == 1 ? u21 : n == 2 ? u31 : u41;
    const double unm = n == 1 ? u21m : n == 2 ? u31m : u41m;
    double* fl = F + 5 * p;
    fl[1] = dir.t3 * (u21 - u21m);
    fl[2] = dir.t3 * (u31 - u31m);
    fl[3] = dir.t3 * (u41 - u41m);
    fl[n] = (4.0 / 3.0) * dir.t3 * (un - unm);
    fl[4] = 0.50 * (1.0 - C1 * C5) * dir.t3 *
                ((u21 * u21 + u31 * u31 + u41 * u41) - (u21m * u21m + u31m * u31m + u41m * u41m)) +
            (1.0 / 6.0) * dir.t3 * (un * un - unm * unm) + C1 * C5 * dir.t3 * (u51 - u51m);
  }
  for (int p = lo; p <= hi; ++p) {
    const double* v = U + 5 * p;
    double* o = O + 5 * p;
    o[0] = o[0] + dir.d[0] * dir.t1 * (v[-5] - 2.0 * v[0] + v[5]);
    for (int m = 1; m < 5; ++m)
      o[m] = o[m] + dir.t3 * C3 * C4 * (F[5 * (p + 1) + m] - F[5 * p + m]) +
             dir.d[m] * dir.t1 * (v[m - 5] - 2.0 * v[m] + v[m + 5]);
  }

  // Fourth-difference dissipation, one-sided at the two points next to each boundary.
  const double dssp = c_.dssp;
  for (int p = lo; p <= hi; ++p) {
    const int g = global_first + p;
    const double* v = U + 5 * p;
    double* o = O + 5 * p;
    if (g >= 3 && g <= global_points - 4) {
      for (int m = 0; m < 5; ++m)
        o[m] = o[m] - dssp * (v[m - 10] - 4.0 * v[m - 5] + 6.0 * v[m] - 4.0 * v[m + 5] + v[m + 10]);
    } else if (g == 1) {
      for (int m = 0; m < 5; ++m) o[m] = o[m] - dssp * (+5.0 * v[m] - 4.0 * v[m + 5] + v[m + 10]);
    } else if (g == 2) {
      for (int m = 0; m < 5; ++m) o[m] = o[m] - dssp * (-4.0 * v[m - 5] + 6.0 * v[m] - 4.0 * v[m + 5] + v[m + 10]);
    } else if (g == global_points - 3) {
      for (int m = 0; m < 5; ++m) o[m] = o[m] - dssp * (v[m - 10] - 4.0 * v[m - 5] + 6.0 * v[m] - 4.0 * v[m + 5]);
    } else {  // g == global_points - 2
      for (int m = 0; m < 5; ++m) o[m] = o[m] - dssp * (v[m - 10] - 4.0 * v[m - 5] + 5.0 * v[m]);
    }
  }

  for (int p = lo; p <= hi; ++p) {
    const std::size_t s = first_point + std::size_t(p) * stride;
    for (int m = 0; m < 5; ++m) out[5 * s + m] = O[5 * p + m];
  }
}

void FluxOperator::add(const double* field, const double* rho_i, const double* qs, double* out) {
  const LocalFields& f = f_;
  const Coefficients& c = c_;
  if (f.ist > f.iend || f.jst > f.jend) return;
  const Direction x{c.tx1, c.tx2, c.tx3, {c.dx1, c.dx2, c.dx3, c.dx4, c.dx5}};
  const Direction y{c.ty1, c.ty2, c.ty3, {c.dy1, c.dy2, c.dy3, c.dy4, c.dy5}};
  const Direction z{c.tz1, c.tz2, c.tz3, {c.dz1, c.dz2, c.dz3, c.dz4, c.dz5}};
  const int nz = f.nz0;
  for (int k = 1; k <= nz - 2; ++k)
    for (int j = f.jst; j <= f.jend; ++j)
      line<1>(x, field, rho_i, qs, out, f.point(k, j, 0), 1, f.nxa, f.ist, f.iend, f.gi(0), f.nx0);
  for (int k = 1; k <= nz - 2; ++k)
    for (int i = f.ist; i <= f.iend; ++i)
      line<2>(y, field, rho_i, qs, out, f.point(k, 0, i), std::size_t(f.nxa), f.nya, f.jst, f.jend, f.gj(0), f.ny0);
  const std::size_t plane = std::size_t(f.nya) * f.nxa;
  for (int j = f.jst; j <= f.jend; ++j)
    for (int i = f.ist; i <= f.iend; ++i)
      line<3>(z, field, rho_i, qs, out, f.point(0, j, i), plane, nz, 1, nz - 2, 0, nz);
}

}  // namespace nas::lu
