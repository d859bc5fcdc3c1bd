// nas/ft/spectral_fields.cc: FT's initial field, decay factors, time step and checksum
// over the slab decomposition (see spectral_fields.h).
#include "nas/ft/spectral_fields.h"

#include <cmath>

#include "nas/common/randlc.h"

namespace nas::ft {

void fill_initial_field(const SlabLayout& layout, Complex* space) {
  const int nx = layout.nx(), ny = layout.ny();
  const long long numbers_per_plane = 2LL * nx * ny;
  for (int plane = 0; plane < layout.local_planes(); ++plane) {
    const int z = layout.first_plane() + plane;
    double x = kNpbSeed;
    randlc(&x, npb_power(kNpbMultiplier, numbers_per_plane * z));
    for (int y = 0; y < ny; ++y) {
      Complex* row = space + (std::size_t(plane) * ny + y) * nx;
      // std::complex<double> is laid out as two doubles (re, im): fill them in order.
      vranlc(2 * nx, &x, kNpbMultiplier, reinterpret_cast<double*>(row));
    }
  }
}

namespace {
// Signed wave number of index i on an axis of n points: 0, 1, ..., n/2-1, -n/2, ..., -1.
inline int wave_number(int i, int n) { return i < n / 2 ? i : i - n; }
}  // namespace

void fill_decay_factors(const SlabLayout& layout, double* twiddle) {
  const double pi = 3.141592653589793238;
  const double alpha = 1.0e-6;
  const double ap = -4.0 * alpha * (pi * pi);
  const int nx = layout.nx(), ny = layout.ny(), nz = layout.nz();
  std::size_t index = 0;
  for (int z = 0; z < nz; ++z) {
    const int kz = wave_number(z, nz);
    for (int row = 0; row < layout.local_rows(); ++row) {
      const int ky = wave_number(layout.first_row() + row, ny);
      const int kyz2 = kz * kz + ky * ky;
      for (int x = 0; x < nx; ++x) {
        const int kx = wave_number(x, nx);
        twiddle[index++] = std::exp(ap * double(kx * kx + kyz2));
      }
    }
  }
}

void evolve(const SlabLayout& layout, Complex* spectrum, const double* twiddle, Complex* work) {
  double* s = reinterpret_cast<double*>(spectrum);
  double* w = reinterpret_cast<double*>(work);
  const std::size_t n = layout.local_size();
  for (std::size_t i = 0; i < n; ++i) {
    const double factor = twiddle[i];
    const double re = s[2 * i] * factor, im = s[2 * i + 1] * factor;
    s[2 * i] = re;
    s[2 * i + 1] = im;
    w[2 * i] = re;
    w[2 * i + 1] = im;
  }
}

Complex local_checksum(const SlabLayout& layout, const Complex* space) {
  const int nx = layout.nx(), ny = layout.ny(), nz = layout.nz();
  Complex sum(0.0, 0.0);
  for (int j = 1; j <= 1024; ++j) {
    const int x = j % nx, y = (3 * j) % ny, z = (5 * j) % nz;
    const int plane = z - layout.first_plane();
    if (plane < 0 || plane >= layout.local_planes()) continue;
    sum += space[(std::size_t(plane) * ny + y) * nx + x];
  }
  return sum;
}

}  // namespace nas::ft
