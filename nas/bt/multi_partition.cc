// nas/bt/multi_partition.cc: cell coordinates, sizes and neighbours of the
// multi-partition decomposition (see multi_partition.h).
#include "nas/bt/multi_partition.h"

#include <string>

namespace nas::bt {

namespace {
int wrap(int v, int q) { return ((v % q) + q) % q; }
}  // namespace

MultiPartition::MultiPartition(int nprocs, int pid, int n) : pid_(pid), n_(n) {
  int q = 1;
  while (q * q < nprocs) ++q;
  if (q * q != nprocs)
    throw std::invalid_argument(
        "the multi-partition decomposition needs a square number of processes "
        "(1, 4, 9, 16, ...), not " +
        std::to_string(nprocs));
  if (n / q < 2)
    throw std::invalid_argument("a grid of " + std::to_string(n) + " points per direction cannot be cut into " +
                                std::to_string(q) + " cells of at least 2 points");
  q_ = q;
  row_ = pid / q;
  col_ = pid % q;
}

int MultiPartition::pid_of(int row, int col) const { return wrap(row, q_) * q_ + wrap(col, q_); }

std::array<int, 3> MultiPartition::coords(int pid, int c) const {
  const int row = pid / q_, col = pid % q_;
  return {wrap(col + c, q_), wrap(row - c, q_), c};
}

CellExtent MultiPartition::extent(int pid, int c) const {
  const std::array<int, 3> cc = coords(pid, c);
  CellExtent e;
  const int base = n_ / q_, excess = n_ % q_;
  for (int a = 0; a < 3; ++a) {
    if (cc[a] < excess) {
      e.size[a] = base + 1;
      e.start[a] = cc[a] * (base + 1);
    } else {
      e.size[a] = base;
      e.start[a] = excess * (base + 1) + (cc[a] - excess) * base;
    }
  }
  return e;
}

int MultiPartition::neighbour(int axis, int side) const {
  switch (axis) {
    case 0:
      return pid_of(row_, col_ + side);
    case 1:
      return pid_of(row_ + side, col_);
    default:
      return pid_of(row_ + side, col_ - side);
  }
}

int MultiPartition::neighbour_cell(int axis, int side, int c) const { return axis == 2 ? c + side : c; }

int MultiPartition::cell_at_stage(int axis, int s) const {
  switch (axis) {
    case 0:
      return wrap(s - col_, q_);
    case 1:
      return wrap(row_ - s, q_);
    default:
      return s;
  }
}

int MultiPartition::max_face_points() const {
  const int largest = (n_ + q_ - 1) / q_;
  return largest * largest;
}

}  // namespace nas::bt
