// nas/cg/cg_matrix.h: the NPB CG test matrix, built for a block of rows. The matrix is
// A = sum over i of size_i * v_i v_i^T (v_i a random sparse vector with a 0.5 at i, the
// sizes falling geometrically from 1 to rcond) plus (rcond - shift) on the diagonal,
// exactly as NPB's makea/sprnvc/vecset/sparse define it: every process draws the whole
// random stream (cheap) but keeps only the entries of its own rows, in compressed sparse
// row form with global column indices; duplicates are summed in generation order.
#pragma once

#include <vector>

namespace nas::cg {

struct CgShape {
  int n;         // order of the matrix (NA)
  int nonzer;    // nonzeros per generated vector (NONZER)
  double shift;  // SHIFT
  double rcond;  // condition-number target (0.1 for every class)
};

// Rows [first_row, last_row) of A in CSR form (row_start has rows + 1 entries).
struct CsrRows {
  int first_row = 0;
  int rows = 0;
  std::vector<int> row_start;
  std::vector<int> column;  // global column, 0-based
  std::vector<double> value;
};

// Builds rows [first_row, last_row) of the CG matrix; *seed is the NPB stream state
// (314159265 advanced once, as CG's main does) and is advanced past the matrix.
CsrRows make_cg_matrix_rows(const CgShape& shape, int first_row, int last_row, double* seed);

}  // namespace nas::cg
