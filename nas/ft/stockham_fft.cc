// nas/ft/stockham_fft.cc: blocked radix-2 Stockham FFT (see stockham_fft.h).
//
// Stage s of m (half-width h = 2^s, groups g = n / 2^(s+1)): for group i and offset k < h,
//   y[i*2h + k]     = x[i*h + k] + x[i*h + k + n/2]
//   y[i*2h + k + h] = w_i * (x[i*h + k] - x[i*h + k + n/2]),  w_i = exp(sign*i*pi*i/g).
// With the block of lines fastest, (i*h + k)*B + b runs contiguously over k and b.
#include "nas/ft/stockham_fft.h"

#include <algorithm>
#include <cmath>

namespace nas::ft {

FftRoots::FftRoots(int n) : n_(n), log2n_(0), re_(std::max(n, 2)), im_(std::max(n, 2)) {
  while ((1 << log2n_) < n) ++log2n_;
  const double pi = 3.141592653589793238;
  for (int width = 1; width < n; width *= 2) {
    const double t = pi / width;
    for (int j = 0; j < width; ++j) {
      const double angle = j * t;
      re_[width + j] = std::cos(angle);
      im_[width + j] = std::sin(angle);
    }
  }
}

FftScratch::FftScratch(int longest, int block)
    : block_(block), part_size_(std::size_t(longest) * block), storage_(4 * part_size_) {}

namespace {

// One stage from (xr, xi) into (yr, yi) for blocks of `block` lines.
inline void stage(int sign, int n, int half, int groups, int block, const double* xr,
                  const double* xi, double* yr, double* yi, const FftRoots& roots) {
  const std::size_t run = std::size_t(half) * block;          // contiguous k,b run
  const std::size_t second_half = std::size_t(n / 2) * block;  // x offset of the pair
  for (int i = 0; i < groups; ++i) {
    const double wr = roots.re()[groups + i];
    const double wi = sign >= 1 ? roots.im()[groups + i] : -roots.im()[groups + i];
    const double* ar = xr + i * run;
    const double* ai = xi + i * run;
    const double* br = ar + second_half;
    const double* bi = ai + second_half;
    double* sr = yr + 2 * i * run;
    double* si = yi + 2 * i * run;
    double* dr = sr + run;
    double* di = si + run;
    for (std::size_t t = 0; t < run; ++t) {
      const double x11r = ar[t], x11i = ai[t], x21r = br[t], x21i = bi[t];
      sr[t] = x11r + x21r;
      si[t] = x11i + x21i;
      const double er = x11r - x21r, ei = x11i - x21i;
      dr[t] = wr * er - wi * ei;
      di[t] = wr * ei + wi * er;
    }
  }
}

}  // namespace

void fft_lines(int sign, Complex* data, std::ptrdiff_t element_stride, std::ptrdiff_t lines,
               std::ptrdiff_t line_stride, const FftRoots& roots, FftScratch& scratch) {
  const int n = roots.n();
  const int m = roots.log2n();
  if (n == 1) return;
  for (std::ptrdiff_t first = 0; first < lines; first += scratch.block()) {
    const int block = int(std::min<std::ptrdiff_t>(scratch.block(), lines - first));
    double* xr = scratch.part(0);
    double* xi = scratch.part(1);
    double* yr = scratch.part(2);
    double* yi = scratch.part(3);
    // Gather: element j of line first+b goes to position j*block + b.
    for (int j = 0; j < n; ++j) {
      const Complex* source = data + first * line_stride + j * element_stride;
      for (int b = 0; b < block; ++b) {
        const Complex value = source[b * line_stride];
        xr[j * block + b] = value.real();
        xi[j * block + b] = value.imag();
      }
    }
    int half = 1, groups = n / 2;
    for (int s = 0; s < m; ++s) {
      stage(sign, n, half, groups, block, xr, xi, yr, yi, roots);
      std::swap(xr, yr);
      std::swap(xi, yi);
      half *= 2;
      groups /= 2;
    }
    for (int j = 0; j < n; ++j) {
      Complex* target = data + first * line_stride + j * element_stride;
      for (int b = 0; b < block; ++b)
        target[b * line_stride] = Complex(xr[j * block + b], xi[j * block + b]);
    }
  }
}

}  // namespace nas::ft
