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

// Root `index` of roots.re()/im() for transforms of this sign (conjugated for sign -1).
inline void root(const FftRoots& roots, int sign, int index, double& re, double& im) {
  re = roots.re()[index];
  im = sign >= 1 ? roots.im()[index] : -roots.im()[index];
}

// One stage from (xr, xi) into (yr, yi) for blocks of `block` lines.
inline void stage(int sign, int n, int half, int groups, int block, const double* __restrict xr,
                  const double* __restrict xi, double* __restrict yr, double* __restrict yi, const FftRoots& roots) {
  const std::size_t run = std::size_t(half) * block;           // contiguous k,b run
  const std::size_t second_half = std::size_t(n / 2) * block;  // x offset of the pair
  for (int i = 0; i < groups; ++i) {
    double wr, wi;
    root(roots, sign, groups + i, wr, wi);
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

// Two consecutive stages (half-widths h and 2h) in one pass over the block, the same
// operations in the same order as two calls of stage(), so the results are bit for bit
// the same with half the passes through the scratch. For group i < groups/2 and offset
// k < h, from a = x[i*h + k] and b, c, d a quarter, a half and three quarters of the
// line further:
//   y0 = a + c, y1 = w_i (a - c), y2 = b + d, y3 = w_(i + groups/2) (b - d),
//   z[i*4h + k] = y0 + y2, z[i*4h + k + 2h] = v_i (y0 - y2),
//   z[i*4h + k + h] = y1 + y3, z[i*4h + k + 3h] = v_i (y1 - y3), v_i = w'_i of stage 2.
inline void stage_pair(int sign, int n, int half, int groups, int block, const double* __restrict xr,
                       const double* __restrict xi, double* __restrict yr, double* __restrict yi,
                       const FftRoots& roots) {
  const std::size_t run = std::size_t(half) * block;
  const std::size_t quarter = std::size_t(n / 4) * block;
  const int pairs = groups / 2;
  for (int i = 0; i < pairs; ++i) {
    double w1r, w1i, w3r, w3i, vr, vi;
    root(roots, sign, groups + i, w1r, w1i);
    root(roots, sign, groups + i + pairs, w3r, w3i);
    root(roots, sign, pairs + i, vr, vi);
    const double* ar = xr + i * run;
    const double* ai = xi + i * run;
    double* z0r = yr + 4 * i * run;
    double* z0i = yi + 4 * i * run;
#pragma GCC ivdep  // the four outputs are `run` apart: no iteration writes what another reads or writes
    for (std::size_t t = 0; t < run; ++t) {
      const double a_r = ar[t], a_i = ai[t];
      const double b_r = ar[t + quarter], b_i = ai[t + quarter];
      const double c_r = ar[t + 2 * quarter], c_i = ai[t + 2 * quarter];
      const double d_r = ar[t + 3 * quarter], d_i = ai[t + 3 * quarter];
      const double y0r = a_r + c_r, y0i = a_i + c_i;
      const double e1r = a_r - c_r, e1i = a_i - c_i;
      const double y1r = w1r * e1r - w1i * e1i, y1i = w1r * e1i + w1i * e1r;
      const double y2r = b_r + d_r, y2i = b_i + d_i;
      const double e3r = b_r - d_r, e3i = b_i - d_i;
      const double y3r = w3r * e3r - w3i * e3i, y3i = w3r * e3i + w3i * e3r;
      z0r[t] = y0r + y2r;
      z0i[t] = y0i + y2i;
      const double f0r = y0r - y2r, f0i = y0i - y2i;
      z0r[t + 2 * run] = vr * f0r - vi * f0i;
      z0i[t + 2 * run] = vr * f0i + vi * f0r;
      z0r[t + run] = y1r + y3r;
      z0i[t + run] = y1i + y3i;
      const double f1r = y1r - y3r, f1i = y1i - y3i;
      z0r[t + 3 * run] = vr * f1r - vi * f1i;
      z0i[t + 3 * run] = vr * f1i + vi * f1r;
    }
  }
}

// Element j of line b (at lines[b * line_stride + j * element_stride]) to position
// j*block + b of (re, im), and back. The memory side is walked along its shorter stride:
// along each line when its elements are adjacent (x lines: a line at a time), across the
// lines otherwise (y and z lines: `block` adjacent numbers at a time).
void gather(const Complex* lines, std::ptrdiff_t element_stride, std::ptrdiff_t line_stride, int n, int block,
            double* __restrict re, double* __restrict im) {
  if (element_stride == 1) {
    for (int b = 0; b < block; ++b) {
      const Complex* line = lines + b * line_stride;
      for (int j = 0; j < n; ++j) {
        re[j * block + b] = line[j].real();
        im[j * block + b] = line[j].imag();
      }
    }
    return;
  }
  for (int j = 0; j < n; ++j) {
    const Complex* source = lines + j * element_stride;
    for (int b = 0; b < block; ++b) {
      re[j * block + b] = source[b * line_stride].real();
      im[j * block + b] = source[b * line_stride].imag();
    }
  }
}

void scatter(const double* __restrict re, const double* __restrict im, int n, int block, Complex* lines,
             std::ptrdiff_t element_stride, std::ptrdiff_t line_stride) {
  if (element_stride == 1) {
    for (int b = 0; b < block; ++b) {
      Complex* line = lines + b * line_stride;
      for (int j = 0; j < n; ++j) line[j] = Complex(re[j * block + b], im[j * block + b]);
    }
    return;
  }
  for (int j = 0; j < n; ++j) {
    Complex* target = lines + j * element_stride;
    for (int b = 0; b < block; ++b) target[b * line_stride] = Complex(re[j * block + b], im[j * block + b]);
  }
}

}  // namespace

void fft_lines(int sign, Complex* data, std::ptrdiff_t element_stride, std::ptrdiff_t lines, std::ptrdiff_t line_stride,
               const FftRoots& roots, FftScratch& scratch) {
  const int n = roots.n();
  const int m = roots.log2n();
  if (n == 1) return;
  for (std::ptrdiff_t first = 0; first < lines; first += scratch.block()) {
    const int block = int(std::min<std::ptrdiff_t>(scratch.block(), lines - first));
    double* xr = scratch.part(0);
    double* xi = scratch.part(1);
    double* yr = scratch.part(2);
    double* yi = scratch.part(3);
    Complex* lines_here = data + first * line_stride;
    gather(lines_here, element_stride, line_stride, n, block, xr, xi);
    int half = 1, groups = n / 2;
    for (int s = 0; s < m;) {
      if (s + 1 < m) {
        stage_pair(sign, n, half, groups, block, xr, xi, yr, yi, roots);
        half *= 4;
        groups /= 4;
        s += 2;
      } else {
        stage(sign, n, half, groups, block, xr, xi, yr, yi, roots);
        half *= 2;
        groups /= 2;
        s += 1;
      }
      std::swap(xr, yr);
      std::swap(xi, yi);
    }
    scatter(xr, xi, n, block, lines_here, element_stride, line_stride);
  }
}

}  // namespace nas::ft
