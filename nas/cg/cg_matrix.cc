// nas/cg/cg_matrix.cc: generation of the NPB CG matrix rows (see cg_matrix.h).
#include "nas/cg/cg_matrix.h"

#include <cmath>

#include "nas/common/randlc.h"

namespace nas::cg {

namespace {

// One generated sparse vector: positions (0-based) and values.
struct SparseVector {
  std::vector<int> index;
  std::vector<double> value;
};

// NPB's sprnvc: nonzer distinct random positions in [0, n) with random values. Each try
// draws a value then a position (scaled to the next power of two, rejected beyond n);
// repeated positions are skipped, their numbers still consumed. `marked` is all false on
// entry and on return.
void random_sparse_vector(int n, int nonzer, int power_of_two, double* seed, std::vector<char>& marked,
                          SparseVector& out) {
  out.index.clear();
  out.value.clear();
  while (static_cast<int>(out.index.size()) < nonzer) {
    double value = randlc(seed, kNpbMultiplier);
    double where = randlc(seed, kNpbMultiplier);
    int position = static_cast<int>(power_of_two * where);
    if (position >= n || marked[position]) continue;
    marked[position] = 1;
    out.index.push_back(position);
    out.value.push_back(value);
  }
  for (int position : out.index) marked[position] = 0;
}

// NPB's vecset: position i gets value (replacing, or appended when absent).
void set_element(SparseVector& v, int i, double value) {
  bool found = false;
  for (std::size_t k = 0; k < v.index.size(); ++k) {
    if (v.index[k] == i) {
      v.value[k] = value;
      found = true;
    }
  }
  if (!found) {
    v.index.push_back(i);
    v.value.push_back(value);
  }
}

}  // namespace

CsrRows make_cg_matrix_rows(const CgShape& shape, int first_row, int last_row, double* seed) {
  const int n = shape.n;
  const int rows = last_row - first_row;
  int power_of_two = 1;
  do power_of_two *= 2;
  while (power_of_two < n);

  // Triplets of this process's rows, in generation order.
  std::vector<int> element_row, element_column;
  std::vector<double> element_value;
  const std::size_t expected = static_cast<std::size_t>(rows) * (shape.nonzer + 1) * (shape.nonzer + 1) + rows;
  element_row.reserve(expected);
  element_column.reserve(expected);
  element_value.reserve(expected);

  std::vector<char> marked(n, 0);
  SparseVector v;
  double size = 1.0;
  const double ratio = std::pow(shape.rcond, 1.0 / n);
  for (int outer = 0; outer < n; ++outer) {
    random_sparse_vector(n, shape.nonzer, power_of_two, seed, marked, v);
    set_element(v, outer, 0.5);
    for (std::size_t c = 0; c < v.index.size(); ++c) {
      double scale = size * v.value[c];
      for (std::size_t r = 0; r < v.index.size(); ++r) {
        int row = v.index[r];
        if (row < first_row || row >= last_row) continue;
        element_row.push_back(row - first_row);
        element_column.push_back(v.index[c]);
        element_value.push_back(v.value[r] * scale);
      }
    }
    size *= ratio;
  }
  for (int row = first_row; row < last_row; ++row) {
    element_row.push_back(row - first_row);
    element_column.push_back(row);
    element_value.push_back(shape.rcond - shape.shift);
  }

  // Stable bucket sort by row.
  std::vector<int> bucket_start(rows + 1, 0);
  for (int r : element_row) ++bucket_start[r + 1];
  for (int r = 0; r < rows; ++r) bucket_start[r + 1] += bucket_start[r];
  std::vector<int> order(element_row.size());
  {
    std::vector<int> next(bucket_start.begin(), bucket_start.end() - 1);
    for (std::size_t e = 0; e < element_row.size(); ++e) order[next[element_row[e]]++] = static_cast<int>(e);
  }

  // Merge duplicates per row: summed in generation order, columns in order of first appearance.
  CsrRows out;
  out.first_row = first_row;
  out.rows = rows;
  out.row_start.assign(rows + 1, 0);
  out.column.reserve(element_row.size());
  out.value.reserve(element_row.size());
  std::vector<double> accumulator(n, 0.0);
  std::vector<int> touched;
  for (int r = 0; r < rows; ++r) {
    touched.clear();
    for (int k = bucket_start[r]; k < bucket_start[r + 1]; ++k) {
      int e = order[k];
      int col = element_column[e];
      accumulator[col] += element_value[e];
      if (!marked[col] && accumulator[col] != 0.0) {
        marked[col] = 1;
        touched.push_back(col);
      }
    }
    for (int col : touched) {
      marked[col] = 0;
      double sum = accumulator[col];
      accumulator[col] = 0.0;
      if (sum != 0.0) {
        out.column.push_back(col);
        out.value.push_back(sum);
      }
    }
    out.row_start[r + 1] = static_cast<int>(out.column.size());
  }
  return out;
}

}  // namespace nas::cg
