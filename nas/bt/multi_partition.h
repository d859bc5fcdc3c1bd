// nas/bt/multi_partition.h: NPB's multi-partition decomposition for p = q*q processes.
// The grid is cut into q x q x q cells; process (row, col) = (pid / q, pid % q) owns q
// cells, cell c at cell coordinates ((col + c) mod q, (row - c) mod q, c). Every line
// of cells in any direction then holds one cell of each of q processes, so each stage
// of a line sweep keeps every process busy, and the next cell along a direction always
// belongs to the same neighbour process (the successor), whatever the cell.
#pragma once

#include <array>
#include <stdexcept>

namespace nas::bt {

// The points of one cell: global index of its first point and number of points, per axis.
struct CellExtent {
  std::array<int, 3> start{};
  std::array<int, 3> size{};
};

class MultiPartition {
 public:
  // Throws std::invalid_argument when nprocs is not a square or the cells would have
  // fewer than two points per direction (the ghost layers are two deep).
  MultiPartition(int nprocs, int pid, int n);

  int q() const { return q_; }
  int pid() const { return pid_; }
  int n() const { return n_; }

  // Cell coordinates of cell c of process pid.
  std::array<int, 3> coords(int pid, int c) const;
  // Global extent of cell c of process pid (cells are the same size for every process
  // in a given cell row, so a neighbour's extent is known without asking it).
  CellExtent extent(int pid, int c) const;
  CellExtent extent(int c) const { return extent(pid_, c); }

  // The process owning the next (+1) or previous (-1) cell along axis of any of my
  // cells, and the index it gives that cell.
  int neighbour(int axis, int side) const;
  int neighbour_cell(int axis, int side, int c) const;

  // Which of my cells is at cell coordinate s along axis (the cell of sweep stage s).
  int cell_at_stage(int axis, int s) const;

  // Largest number of points of a cell face, over all cells: sizes the message slots.
  int max_face_points() const;

 private:
  int q_ = 1, pid_ = 0, n_ = 0, row_ = 0, col_ = 0;
  int pid_of(int row, int col) const;
};

}  // namespace nas::bt
