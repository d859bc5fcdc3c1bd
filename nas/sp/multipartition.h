// nas/sp/multipartition.h: NPB SP's multi-partition decomposition. With p = q*q processes
// the n^3 grid is cut into q*q*q cells; process (x0, y0) = (pid mod q, pid / q) owns the q
// cells c = 0..q-1 at cell coordinates ((x0 + c) mod q, (y0 - c) mod q, c). Every slab of
// cells perpendicular to any axis then holds exactly one cell of every process, so each
// stage of a line sweep keeps every process busy. Along each axis a process has one
// successor (owner of the next cell of each of its cells) and one predecessor.
#pragma once

#include <array>
#include <stdexcept>
#include <vector>

namespace nas::sp {

struct Cell {
  std::array<int, 3> coord;  // cell coordinates, each in 0..q-1
  std::array<int, 3> low;    // first global grid index of the cell per axis
  std::array<int, 3> size;   // grid points per axis
};

class Multipartition {
 public:
  // Throws std::invalid_argument when nprocs is not a square, or when the cells would be
  // thinner than two grid points.
  Multipartition(int nprocs, int pid, int n);

  int q() const { return q_; }
  int n() const { return n_; }
  int pid() const { return pid_; }
  const std::vector<Cell>& cells() const { return cells_; }
  // The index of this process's cell whose coordinate along axis is position.
  int cell_at(int axis, int position) const { return slice_[axis][position]; }
  int successor(int axis) const { return successor_[axis]; }
  int predecessor(int axis) const { return predecessor_[axis]; }
  // The largest cell extent along any axis (every process computes the same).
  int max_cell_size() const { return max_size_; }

  // Extent and first index of the cell at coordinate position (0..q-1) along an axis.
  int extent(int position) const;
  int first(int position) const;

 private:
  int q_ = 1, n_ = 0, pid_ = 0, max_size_ = 0;
  std::vector<Cell> cells_;
  std::array<std::vector<int>, 3> slice_;
  std::array<int, 3> successor_{}, predecessor_{};
};

}  // namespace nas::sp
