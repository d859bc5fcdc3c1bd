// nas/bt/block_ops.h: the 5x5 block operations of the block-tridiagonal Thomas
// algorithm. A block is 25 doubles in column-major order, element (row r, column c) at
// [5 * c + r]. Each element update is the same single operation, in the same order of
// terms, as NPB's solve_subs (matvec_sub, matmul_sub, binvcrhs, binvrhs), so the
// elimination is bit-identical to the reference. No two arguments of one call overlap
// (the solver passes distinct blocks and vectors), hence __restrict: without it every
// store to one operand makes the compiler reload the others' elements.
#pragma once

namespace nas::bt {

// b <- b - A a
inline void matvec_sub(const double* __restrict a, const double* __restrict v, double* __restrict b) {
#pragma GCC unroll 5
  for (int r = 0; r < 5; ++r)
    b[r] = b[r] - a[r] * v[0] - a[5 + r] * v[1] - a[10 + r] * v[2] - a[15 + r] * v[3] - a[20 + r] * v[4];
}

// C <- C - A B
inline void matmul_sub(const double* __restrict a, const double* __restrict b, double* __restrict c) {
#pragma GCC unroll 5
  for (int col = 0; col < 5; ++col) {
    const double* bc = b + 5 * col;
#pragma GCC unroll 5
    for (int r = 0; r < 5; ++r)
      c[5 * col + r] = c[5 * col + r] - a[r] * bc[0] - a[5 + r] * bc[1] - a[10 + r] * bc[2] - a[15 + r] * bc[3] -
                       a[20 + r] * bc[4];
  }
}

// Gauss-Jordan on B without pivoting, applied to C and r: C <- B^-1 C, r <- B^-1 r
// (B is destroyed).
inline void binvcrhs(double* __restrict b, double* __restrict c, double* __restrict r) {
#pragma GCC unroll 5
  for (int p = 0; p < 5; ++p) {
    const double pivot = 1.00 / b[5 * p + p];
#pragma GCC unroll 4
    for (int col = p + 1; col < 5; ++col) b[5 * col + p] = b[5 * col + p] * pivot;
#pragma GCC unroll 5
    for (int col = 0; col < 5; ++col) c[5 * col + p] = c[5 * col + p] * pivot;
    r[p] = r[p] * pivot;
#pragma GCC unroll 5
    for (int row = 0; row < 5; ++row) {
      if (row == p) continue;
      const double coeff = b[5 * p + row];
#pragma GCC unroll 4
      for (int col = p + 1; col < 5; ++col) b[5 * col + row] = b[5 * col + row] - coeff * b[5 * col + p];
#pragma GCC unroll 5
      for (int col = 0; col < 5; ++col) c[5 * col + row] = c[5 * col + row] - coeff * c[5 * col + p];
      r[row] = r[row] - coeff * r[p];
    }
  }
}

// r <- B^-1 r (B is destroyed).
inline void binvrhs(double* __restrict b, double* __restrict r) {
#pragma GCC unroll 5
  for (int p = 0; p < 5; ++p) {
    const double pivot = 1.00 / b[5 * p + p];
#pragma GCC unroll 4
    for (int col = p + 1; col < 5; ++col) b[5 * col + p] = b[5 * col + p] * pivot;
    r[p] = r[p] * pivot;
#pragma GCC unroll 5
    for (int row = 0; row < 5; ++row) {
      if (row == p) continue;
      const double coeff = b[5 * p + row];
#pragma GCC unroll 4
      for (int col = p + 1; col < 5; ++col) b[5 * col + row] = b[5 * col + row] - coeff * b[5 * col + p];
      r[row] = r[row] - coeff * r[p];
    }
  }
}

// r <- r - C v (back substitution step).
inline void backsub(const double* __restrict c, const double* __restrict v, double* __restrict r) {
#pragma GCC unroll 5
  for (int m = 0; m < 5; ++m)
    r[m] = r[m] - c[m] * v[0] - c[5 + m] * v[1] - c[10 + m] * v[2] - c[15 + m] * v[3] - c[20 + m] * v[4];
}

}  // namespace nas::bt
