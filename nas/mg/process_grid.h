// nas/mg/process_grid.h: the 3-D block decomposition of MG's cubic grid over P = 2^k
// processes (k <= 3 here, so that the coarsest 2x2x2 level still gives every process at
// least one point per direction): P is split over the directions slowest first, z then
// y then x, as 1x1x2, 1x2x2, 2x2x2. Each process owns one block per level; a coarse
// block is exactly the coarse image of the fine one, so restriction and prolongation
// need no data beyond the ghost layer.
#pragma once

#include <array>

namespace nas::mg {

class ProcessGrid {
 public:
  // Throws std::invalid_argument when nprocs cannot split a grid whose coarsest level is
  // coarsest_points wide (nprocs must be a power of two, each direction split at most
  // coarsest_points ways).
  ProcessGrid(int nprocs, int pid, int coarsest_points);

  int nprocs() const { return nprocs_; }
  int pid() const { return pid_; }
  // Processes along direction d (0 = x, the contiguous one).
  int extent(int d) const { return dims_[d]; }
  int coordinate(int d) const { return coords_[d]; }
  // The process whose block is at offset (dx, dy, dz), each in {-1, 0, 1}, periodically.
  int neighbour_at(const std::array<int, 3>& offset) const;

  // Points this process owns along d on a level whose global width is global_points,
  // and the global index of its first one.
  int local_points(int d, int global_points) const { return global_points / dims_[d]; }
  int first_point(int d, int global_points) const { return coords_[d] * local_points(d, global_points); }

 private:
  int pid_of(const std::array<int, 3>& coords) const;

  int nprocs_, pid_;
  std::array<int, 3> dims_{1, 1, 1};
  std::array<int, 3> coords_{0, 0, 0};
};

}  // namespace nas::mg
