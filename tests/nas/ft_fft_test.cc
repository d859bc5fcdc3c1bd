// tests/nas/ft_fft_test.cc: the blocked Stockham FFT of nas/ft against a direct O(n^2)
// DFT with NPB's sign convention (+1: exp(+2 pi i jk/n)), for several lengths, strided
// and contiguous lines, and line counts that are not a multiple of the block; and a
// forward then backward transform giving n times the input.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <vector>

#include "nas/ft/stockham_fft.h"

namespace {

using nas::ft::Complex;

std::vector<Complex> direct_dft(const std::vector<Complex>& x, int sign) {
  const int n = int(x.size());
  const double pi = std::acos(-1.0);
  std::vector<Complex> y(n);
  for (int k = 0; k < n; ++k)
    for (int j = 0; j < n; ++j) y[k] += x[j] * std::polar(1.0, sign * 2.0 * pi * double(j) * k / n);
  return y;
}

// n points per line, `lines` lines laid out either as rows (contiguous lines) or as
// columns (element stride = lines).
struct Shape {
  int n, lines;
  bool columns;
};

class FftAgainstDft : public ::testing::TestWithParam<std::tuple<Shape, int>> {};

TEST_P(FftAgainstDft, Matches) {
  const auto& [shape, sign] = GetParam();
  const std::ptrdiff_t element_stride = shape.columns ? shape.lines : 1;
  const std::ptrdiff_t line_stride = shape.columns ? 1 : shape.n;
  std::vector<Complex> data(std::size_t(shape.n) * shape.lines);
  for (std::size_t i = 0; i < data.size(); ++i)
    data[i] = Complex(std::sin(0.37 * double(i) + 1.0), std::cos(1.3 * double(i)));
  const std::vector<Complex> input = data;

  nas::ft::FftRoots roots(shape.n);
  nas::ft::FftScratch scratch(shape.n, 8);
  nas::ft::fft_lines(sign, data.data(), element_stride, shape.lines, line_stride, roots, scratch);

  for (int l = 0; l < shape.lines; ++l) {
    std::vector<Complex> line(shape.n);
    for (int j = 0; j < shape.n; ++j) line[j] = input[l * line_stride + j * element_stride];
    const std::vector<Complex> expected = direct_dft(line, sign);
    for (int k = 0; k < shape.n; ++k) {
      const Complex got = data[l * line_stride + k * element_stride];
      ASSERT_NEAR(got.real(), expected[k].real(), 1e-9 * shape.n) << "line " << l << " k " << k;
      ASSERT_NEAR(got.imag(), expected[k].imag(), 1e-9 * shape.n) << "line " << l << " k " << k;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, FftAgainstDft,
                         ::testing::Combine(::testing::Values(Shape{1, 3, false}, Shape{2, 5, true}, Shape{4, 8, false},
                                                              Shape{8, 13, true}, Shape{64, 3, false},
                                                              Shape{128, 17, true}),
                                            ::testing::Values(+1, -1)));

TEST(Fft, ForwardThenBackwardIsNTimesTheInput) {
  const int n = 256, lines = 20;
  std::vector<Complex> data(std::size_t(n) * lines);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = Complex(double(i % 7) - 3.0, double(i % 5));
  const std::vector<Complex> input = data;
  nas::ft::FftRoots roots(n);
  nas::ft::FftScratch scratch(n, 16);
  nas::ft::fft_lines(+1, data.data(), lines, lines, 1, roots, scratch);
  nas::ft::fft_lines(-1, data.data(), lines, lines, 1, roots, scratch);
  for (std::size_t i = 0; i < data.size(); ++i) {
    ASSERT_NEAR(data[i].real(), n * input[i].real(), 1e-9) << i;
    ASSERT_NEAR(data[i].imag(), n * input[i].imag(), 1e-9) << i;
  }
}

}  // namespace
