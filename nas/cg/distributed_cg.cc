// nas/cg/distributed_cg.cc: the block-row conjugate-gradient solver (see distributed_cg.h).
#include "nas/cg/distributed_cg.h"

#include <cstring>
#include <utility>

#include "bsplib/bsp.h"
#include "nas/common/collectives.h"

namespace nas::cg {

namespace {

constexpr int kCgSteps = 25;  // cgitmax

}  // namespace

RowBlock row_block(int n, int pid, int nprocs) {
  long long first = static_cast<long long>(n) * pid / nprocs;
  long long last = static_cast<long long>(n) * (pid + 1) / nprocs;
  return {static_cast<int>(first), static_cast<int>(last)};
}

DistributedCg::DistributedCg(int n, CsrRows rows)
    : n_(n), rows_(std::move(rows)), full_(n, 0.0), full_r_(n, 0.0), q_(rows_.rows) {
  if (n_ <= kNarrowColumns && !rows_.column.empty()) {
    narrow_column_.assign(rows_.column.begin(), rows_.column.end());
    std::vector<int>().swap(rows_.column);
  }
  bsp_push_reg(full_.data(), n_ * static_cast<int>(sizeof(double)));
  bsp_push_reg(full_r_.data(), n_ * static_cast<int>(sizeof(double)));
  bsp_sync();
}

DistributedCg::~DistributedCg() {
  bsp_pop_reg(full_r_.data());
  bsp_pop_reg(full_.data());
}

void DistributedCg::put_block(std::vector<double>& full) const {
  const int p = bsp_nprocs(), me = bsp_pid();
  const int offset = rows_.first_row * static_cast<int>(sizeof(double));
  const int nbytes = rows_.rows * static_cast<int>(sizeof(double));
  if (nbytes == 0) return;
  for (int k = 1; k < p; ++k) bsp_hpput((me + k) % p, full.data() + rows_.first_row, full.data(), offset, nbytes);
}

void DistributedCg::share_full_vector() {
  put_block(full_);
  bsp_sync();
}

namespace {

// out[i] = sum over row i's nonzeros of value * vector[column], for rows [0, rows).
// Four partial sums per row: one running sum waits an addition's latency per nonzero.
template <typename Index>
void multiply_rows(int rows, const int* start, const Index* column, const double* value, const double* vector,
                   double* out) {
  for (int i = 0; i < rows; ++i) {
    double sum0 = 0.0, sum1 = 0.0, sum2 = 0.0, sum3 = 0.0;
    int k = start[i];
    const int end = start[i + 1];
    for (; k + 4 <= end; k += 4) {
      sum0 += value[k] * vector[column[k]];
      sum1 += value[k + 1] * vector[column[k + 1]];
      sum2 += value[k + 2] * vector[column[k + 2]];
      sum3 += value[k + 3] * vector[column[k + 3]];
    }
    for (; k < end; ++k) sum0 += value[k] * vector[column[k]];
    out[i] = (sum0 + sum1) + (sum2 + sum3);
  }
}

}  // namespace

void DistributedCg::multiply(double* out) const {
  if (!narrow_column_.empty()) {
    multiply_rows(rows_.rows, rows_.row_start.data(), narrow_column_.data(), rows_.value.data(), full_.data(), out);
  } else {
    multiply_rows(rows_.rows, rows_.row_start.data(), rows_.column.data(), rows_.value.data(), full_.data(), out);
  }
}

double DistributedCg::solve(const double* x, double* z) {
  const int m = rows_.rows;
  double* p_full = full_.data();
  double* r_full = full_r_.data();
  double* p = p_full + rows_.first_row;
  double* r = r_full + rows_.first_row;
  double* q = q_.data();

  double rho_local = 0.0;
  for (int j = 0; j < m; ++j) {
    q[j] = 0.0;
    z[j] = 0.0;
    r[j] = x[j];
    rho_local += r[j] * r[j];
  }
  // all_sum's one bsp_sync also delivers the blocks of r put here.
  put_block(full_r_);
  double rho = all_sum(rho_local);
  std::memcpy(p_full, r_full, n_ * sizeof(double));

  for (int step = 0;; ++step) {
    const double rho0 = rho;
    multiply(q);
    double d_local = 0.0;
    for (int j = 0; j < m; ++j) d_local += p[j] * q[j];
    const double alpha = rho0 / all_sum(d_local);
    for (int j = 0; j < m; ++j) z[j] += alpha * p[j];
    if (step == kCgSteps - 1) break;  // the last step's r and p are never read
    rho_local = 0.0;
    for (int j = 0; j < m; ++j) {
      r[j] -= alpha * q[j];
      rho_local += r[j] * r[j];
    }
    put_block(full_r_);
    rho = all_sum(rho_local);
    const double beta = rho / rho0;
    for (int i = 0; i < n_; ++i) p_full[i] = r_full[i] + beta * p_full[i];
  }

  // Residual ||x - A z||: z goes whole into every process's full-length vector.
  std::memcpy(p, z, m * sizeof(double));
  share_full_vector();
  multiply(q);
  double residual_local = 0.0;
  for (int j = 0; j < m; ++j) {
    double d = x[j] - q[j];
    residual_local += d * d;
  }
  return residual_local;
}

}  // namespace nas::cg
