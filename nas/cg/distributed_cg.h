// nas/cg/distributed_cg.h: NPB CG's inner solver, conj_grad, on a block-row distribution:
// each process owns a contiguous block of rows of A and the same block of every vector.
// The search direction p (and, at the end, z) is needed whole by the sparse matrix-vector
// product, so each process keeps a full-length copy, registered once: in one superstep
// every process hpputs its block into everyone's copy. Dot products are one reduction
// superstep each. Per CG step: 3 supersteps (share p, reduce p.q, reduce r.r).
#pragma once

#include <cstdint>
#include <vector>

#include "nas/cg/cg_matrix.h"

namespace nas::cg {

// The rows owned by process `pid` of `nprocs` for an n-row problem: [first, last).
struct RowBlock {
  int first, last;
};
RowBlock row_block(int n, int pid, int nprocs);

class DistributedCg {
 public:
  // Collective: registers the full-length vector (one bsp_sync).
  DistributedCg(int n, CsrRows rows);
  ~DistributedCg();
  DistributedCg(const DistributedCg&) = delete;
  DistributedCg& operator=(const DistributedCg&) = delete;

  // Number of rows (and vector entries) this process owns.
  int local_size() const { return rows_.rows; }

  // Collective. 25 CG steps on A z = x from z = 0 (x, z: this process's blocks).
  // Returns this process's part of ||x - A z||^2 (not yet summed over processes), so the
  // caller can fold it into its own reduction superstep.
  double solve(const double* x, double* z);

 private:
  // Collective: every process's block of full_ lands in everyone's full_ (one superstep).
  void share_full_vector();
  // out[i] = (A full_)[i] for the local rows.
  void multiply(double* out) const;

  // Columns fit 16 bits up to this order (classes S, W, A): 10 bytes per nonzero streamed
  // by the product instead of 12.
  static constexpr int kNarrowColumns = 65536;

  int n_;
  CsrRows rows_;  // its column list emptied when narrow_column_ holds it
  std::vector<std::uint16_t> narrow_column_;
  std::vector<double> full_;   // full-length p (or z), this block at rows_.first_row
  std::vector<double> q_, r_;  // local blocks
};

}  // namespace nas::cg
