// nas/ft/stockham_fft.h: complex 1-D FFTs of length n = 2^m along one axis of a 3-D
// array, many lines at a time, unnormalised, as NPB FT defines them (sign +1: exponent
// +2*pi*i*j*k/n; sign -1: its conjugate). The algorithm is a radix-2 Stockham autosort
// FFT (the variant NPB attributes to Swarztrauber): each block of lines is gathered into
// a scratch area with the line index fastest, so every butterfly loop runs over a whole
// block of independent lines and vectorises, then scattered back.
#pragma once

#include <complex>
#include <cstddef>
#include <vector>

namespace nas::ft {

using Complex = std::complex<double>;

// Roots of unity for one length n: for each stage width w = 1, 2, 4, ..., n/2 the
// values exp(i*pi*j/w), j < w, stored at index w + j (as NPB's CompExp lays them out).
class FftRoots {
 public:
  explicit FftRoots(int n);
  int n() const { return n_; }
  int log2n() const { return log2n_; }
  const double* re() const { return re_.data(); }
  const double* im() const { return im_.data(); }

 private:
  int n_, log2n_;
  std::vector<double> re_, im_;
};

// Scratch for one block of lines (allocated once, reused by every call).
class FftScratch {
 public:
  // Enough for blocks of up to `block` lines of length up to `longest`.
  FftScratch(int longest, int block);
  int block() const { return block_; }
  double* part(int i) { return storage_.data() + std::size_t(i) * part_size_; }

 private:
  int block_;
  std::size_t part_size_;
  std::vector<double> storage_;  // four parts: x re, x im, y re, y im
};

// Transforms `lines` lines in place: line l's element j is at
// data[l * line_stride + j * element_stride].
void fft_lines(int sign, Complex* data, std::ptrdiff_t element_stride, std::ptrdiff_t lines, std::ptrdiff_t line_stride,
               const FftRoots& roots, FftScratch& scratch);

}  // namespace nas::ft
