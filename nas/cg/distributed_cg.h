// nas/cg/distributed_cg.h: NPB CG's inner solver, conj_grad, on a block-row distribution:
// each process owns a contiguous block of rows of A and the same block of every vector.
// The search direction p (and, at the end, z) is needed whole by the sparse matrix-vector
// product, so each process keeps full-length copies of p and r, registered once. Each CG
// step shares the residual r instead of p: every process hpputs its block of r into
// everyone's copy in the same superstep that sums r.r, and then updates its whole copy
// of p = r + beta p itself (n multiply-adds, the same arithmetic its owner does for each
// block, so every copy is bit-identical). Per CG step: 2 supersteps (reduce p.q; share r
// with r.r), where sharing p itself would take a third.
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
  // Starts this process's block of `full` on its way into everyone's copy of it; the next
  // bsp_sync delivers it.
  void put_block(std::vector<double>& full) const;
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
  std::vector<double> full_;    // full-length p (or z), this block at rows_.first_row
  std::vector<double> full_r_;  // full-length residual r, laid out as full_
  std::vector<double> q_;       // local block
};

}  // namespace nas::cg
