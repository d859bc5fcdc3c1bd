// nas/lu/norms.cc: norms and surface integral (see norms.h).
#include "nas/lu/norms.h"

#include <cmath>
#include <vector>

#include "nas/common/collectives.h"

namespace nas::lu {
namespace {

double interior_points(const LocalFields& f) { return double(f.nx0 - 2) * double(f.ny0 - 2) * double(f.nz0 - 2); }

}  // namespace

void rms_norms(const LocalFields& f, const double* field, double out[5]) {
  double sum[5] = {0, 0, 0, 0, 0};
  for (int k = 1; k <= f.nz0 - 2; ++k)
    for (int j = f.jst; j <= f.jend; ++j)
      for (int i = f.ist; i <= f.iend; ++i) {
        const double* v = field + 5 * f.point(k, j, i);
        for (int m = 0; m < 5; ++m) sum[m] = sum[m] + v[m] * v[m];
      }
  nas::all_reduce_sum(sum, 5);
  for (int m = 0; m < 5; ++m) out[m] = std::sqrt(sum[m] / interior_points(f));
}

void error_norms(const LocalFields& f, const Coefficients& c, double out[5]) {
  double sum[5] = {0, 0, 0, 0, 0}, exact[5];
  for (int k = 1; k <= f.nz0 - 2; ++k)
    for (int j = f.jst; j <= f.jend; ++j)
      for (int i = f.ist; i <= f.iend; ++i) {
        c.exact(f.gi(i), f.gj(j), k, exact);
        const double* u = f.u_at(k, j, i);
        for (int m = 0; m < 5; ++m) {
          const double tmp = exact[m] - u[m];
          sum[m] = sum[m] + tmp * tmp;
        }
      }
  nas::all_reduce_sum(sum, 5);
  for (int m = 0; m < 5; ++m) out[m] = std::sqrt(sum[m] / interior_points(f));
}

double surface_integral(const LocalFields& f, const Coefficients& c) {
  // The inner box, in global 0-based indices: i in [i0, i1], j in [j0, j1], k in [k0, k1].
  const int i0 = 1, i1 = f.nx0 - 2, j0 = 1, j1 = f.ny0 - 3, k0 = 2, k1 = f.nz0 - 2;
  const int ni = i1 - i0 + 1, nj = j1 - j0 + 1, nk = k1 - k0 + 1;
  // Six face arrays: k = k0 and k = k1 over (j, i); j = j0 and j = j1 over (k, i);
  // i = i0 and i = i1 over (k, j).
  const std::size_t s_kz = std::size_t(nj) * ni, s_jy = std::size_t(nk) * ni, s_ix = std::size_t(nk) * nj;
  std::vector<double> faces(2 * (s_kz + s_jy + s_ix), 0.0);
  double* bottom = faces.data();
  double* top = bottom + s_kz;
  double* south = top + s_kz;
  double* north = south + s_jy;
  double* west = north + s_jy;
  double* east = west + s_ix;
  auto pressure = [&](int k, int j, int i) {
    const double* u = f.u_at(k, j, i);
    return kC2 * (u[4] - 0.50 * (u[1] * u[1] + u[2] * u[2] + u[3] * u[3]) / u[0]);
  };
  for (int j = f.jown0(); j <= f.jown1(); ++j)
    for (int i = f.iown0(); i <= f.iown1(); ++i) {
      const int gi = f.gi(i), gj = f.gj(j);
      if (gi < i0 || gi > i1 || gj < j0 || gj > j1) continue;
      bottom[std::size_t(gj - j0) * ni + (gi - i0)] = pressure(k0, j, i);
      top[std::size_t(gj - j0) * ni + (gi - i0)] = pressure(k1, j, i);
    }
  for (int k = k0; k <= k1; ++k) {
    for (int j = f.jown0(); j <= f.jown1(); ++j)
      for (int i = f.iown0(); i <= f.iown1(); ++i) {
        const int gi = f.gi(i), gj = f.gj(j);
        if (gi >= i0 && gi <= i1) {
          if (gj == j0) south[std::size_t(k - k0) * ni + (gi - i0)] = pressure(k, j, i);
          if (gj == j1) north[std::size_t(k - k0) * ni + (gi - i0)] = pressure(k, j, i);
        }
        if (gj >= j0 && gj <= j1) {
          if (gi == i0) west[std::size_t(k - k0) * nj + (gj - j0)] = pressure(k, j, i);
          if (gi == i1) east[std::size_t(k - k0) * nj + (gj - j0)] = pressure(k, j, i);
        }
      }
  }
  nas::all_reduce_sum(faces.data(), int(faces.size()));

  // Sum of the four corners of every cell of a face pair, rows a, columns b.
  auto face_sum = [](const double* p1, const double* p2, int rows, int cols) {
    double sum = 0.0;
    for (int a = 0; a < rows - 1; ++a)
      for (int b = 0; b < cols - 1; ++b) {
        const std::size_t here = std::size_t(a) * cols + b, up = here + cols;
        sum = sum + (p1[here] + p1[here + 1] + p1[up] + p1[up + 1] + p2[here] + p2[here + 1] + p2[up] + p2[up + 1]);
      }
    return sum;
  };
  const double frc1 = c.dxi * c.deta * face_sum(bottom, top, nj, ni);
  const double frc2 = c.dxi * c.dzeta * face_sum(south, north, nk, ni);
  const double frc3 = c.deta * c.dzeta * face_sum(west, east, nk, nj);
  return 0.25 * (frc1 + frc2 + frc3);
}

}  // namespace nas::lu
