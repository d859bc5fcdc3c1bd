// nas/mg/process_grid.cc: the 3-D process grid of MG (see process_grid.h).
#include "nas/mg/process_grid.h"

#include <stdexcept>
#include <string>

namespace nas::mg {

ProcessGrid::ProcessGrid(int nprocs, int pid, int coarsest_points) : nprocs_(nprocs), pid_(pid) {
  if (nprocs < 1 || (nprocs & (nprocs - 1)) != 0) {
    throw std::invalid_argument("MG needs a power-of-two number of processes, not " + std::to_string(nprocs));
  }
  int remaining = nprocs;
  int direction = 2;  // z first: its faces are contiguous planes
  while (remaining > 1) {
    dims_[direction] *= 2;
    remaining /= 2;
    direction = (direction + 2) % 3;  // z, y, x, z, ...
  }
  for (int d = 0; d < 3; ++d) {
    if (dims_[d] > coarsest_points) {
      throw std::invalid_argument("MG on this class supports at most " +
                                  std::to_string(coarsest_points * coarsest_points * coarsest_points) +
                                  " processes, not " + std::to_string(nprocs));
    }
  }
  coords_[0] = pid % dims_[0];
  coords_[1] = (pid / dims_[0]) % dims_[1];
  coords_[2] = pid / (dims_[0] * dims_[1]);
}

int ProcessGrid::pid_of(const std::array<int, 3>& coords) const {
  return coords[0] + dims_[0] * (coords[1] + dims_[1] * coords[2]);
}

int ProcessGrid::neighbour_at(const std::array<int, 3>& offset) const {
  std::array<int, 3> coords = coords_;
  for (int d = 0; d < 3; ++d) coords[d] = (coords[d] + offset[d] + dims_[d]) % dims_[d];
  return pid_of(coords);
}

}  // namespace nas::mg
