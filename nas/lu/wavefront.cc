// nas/lu/wavefront.cc: the pipelined triangular sweeps (see wavefront.h).
#include "nas/lu/wavefront.h"

#include <algorithm>

#include "bsplib/bsp.h"
#include "nas/lu/triangular_solves.h"

namespace nas::lu {

Wavefront::Wavefront(const ProcessGrid& grid, int nz0, int planes_per_block, int cores)
    : px_(grid.px()), py_(grid.py()), cx_(grid.cx()), cy_(grid.cy()), nz0_(nz0) {
  const int interior = nz0 - 2;
  const int fill = px_ + py_ - 2;  // supersteps before the last process starts
  if (planes_per_block <= 0) {
    // More processes than cores: two blocks per superstep of pipeline fill (at least
    // four blocks): every process is busy in 2/3 or more of a sweep's supersteps, and a
    // sweep is only 3 (px + py - 2) supersteps. Measured on 2 cores with 4 processes
    // (class A), each superstep costs milliseconds there, and the processes sharing a
    // core fill each other's idle supersteps, so fewer, fuller supersteps beat a finer
    // pipeline (README.md).
    const int wanted = fill == 0 ? 1 : std::min(interior, std::max(4, 2 * fill));
    planes_per_block = (interior + wanted - 1) / wanted;
    if (fill > 0 && cores >= px_ * py_) {
      // A core per process: a process idle in the pipeline's fill and drain leaves its
      // core idle, so blocks as thin as keep kFinePoints points of work per superstep
      // (the same on every process: the widest block's plane), never coarser than the
      // above. Class A at p = 2: 2 planes, a process busy in 31 of 32 supersteps against
      // 4 of 5; class W (33^3) keeps 8, where thinner blocks lost over tcp.
      const long plane = static_cast<long>(block_count(nz0, px_, 0)) * block_count(nz0, py_, 0);
      const int fine = static_cast<int>((kFinePoints + plane - 1) / plane);
      planes_per_block = std::min(planes_per_block, std::max(1, fine));
    }
  }
  block_ = std::clamp(planes_per_block, 1, interior);
  blocks_ = (interior + block_ - 1) / block_;
}

int Wavefront::supersteps_per_sweep() const { return blocks_ + px_ + py_ - 2; }

void Wavefront::lower_sweep(LocalFields& f, const Coefficients& c, NeighbourExchange& x) const {
  const bool parallel = bsp_nprocs() > 1;
  const int steps = supersteps_per_sweep();
  for (int s = 0; s < steps; ++s) {
    const int b = s - cx_ - cy_;
    if (b >= 0 && b < blocks_) {
      const int k0 = 1 + b * block_, k1 = std::min(nz0_ - 2, k0 + block_ - 1);
      double* rsd = f.rsd.data();
      x.receive_face(kXLow, rsd, f.iown0() - 1, k0, k1);
      x.receive_face(kYLow, rsd, f.jown0() - 1, k0, k1);
      for (int k = k0; k <= k1; ++k) lower_solve_plane(f, c, k);
      x.send_face(kXHigh, rsd, f.iown1(), k0, k1);
      x.send_face(kYHigh, rsd, f.jown1(), k0, k1);
    }
    if (parallel) bsp_sync();
  }
}

void Wavefront::upper_sweep(LocalFields& f, const Coefficients& c, NeighbourExchange& x,
                            const std::function<void()>& finished) const {
  const bool parallel = bsp_nprocs() > 1;
  const int steps = supersteps_per_sweep();
  for (int s = 0; s < steps; ++s) {
    const int b = s - (px_ - 1 - cx_) - (py_ - 1 - cy_);
    if (b >= 0 && b < blocks_) {
      const int k1 = nz0_ - 2 - b * block_, k0 = std::max(1, k1 - block_ + 1);
      double* rsd = f.rsd.data();
      x.receive_face(kXHigh, rsd, f.iown1() + 1, k0, k1);
      x.receive_face(kYHigh, rsd, f.jown1() + 1, k0, k1);
      for (int k = k1; k >= k0; --k) upper_solve_plane(f, c, k);
      x.send_face(kXLow, rsd, f.iown0(), k0, k1);
      x.send_face(kYLow, rsd, f.jown0(), k0, k1);
      if (b == blocks_ - 1 && finished) finished();
    }
    if (parallel) bsp_sync();
  }
}

}  // namespace nas::lu
