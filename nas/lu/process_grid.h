// nas/lu/process_grid.h: LU's 2-D decomposition. The grid's x (i) and y (j) directions
// are split over a px x py grid of processes (P = 2^d, px = 2^ceil(d/2), py = P / px);
// every process owns a column of whole k-lines, so the SSOR sweeps pipeline over k.
// Pid = cx + px * cy; the neighbours are the processes one step along x or y (no wrap).
#pragma once

namespace nas::lu {

class ProcessGrid {
 public:
  // Throws std::invalid_argument when nprocs is not a power of two, or when a block
  // would be narrower than two points (the depth of the ghost layers) along x or y.
  ProcessGrid(int nprocs, int pid, int nx0, int ny0);

  int px() const { return px_; }
  int py() const { return py_; }
  int cx() const { return cx_; }
  int cy() const { return cy_; }
  // Global index of the first owned point, and the number owned, along x and y.
  int x_first() const { return x_first_; }
  int x_count() const { return x_count_; }
  int y_first() const { return y_first_; }
  int y_count() const { return y_count_; }
  // Neighbour pids, or -1 at the edge of the grid.
  int x_low() const { return cx_ > 0 ? pid_of(cx_ - 1, cy_) : -1; }
  int x_high() const { return cx_ < px_ - 1 ? pid_of(cx_ + 1, cy_) : -1; }
  int y_low() const { return cy_ > 0 ? pid_of(cx_, cy_ - 1) : -1; }
  int y_high() const { return cy_ < py_ - 1 ? pid_of(cx_, cy_ + 1) : -1; }

 private:
  int pid_of(int x, int y) const { return x + px_ * y; }

  int px_ = 1, py_ = 1, cx_ = 0, cy_ = 0;
  int x_first_ = 0, x_count_ = 0, y_first_ = 0, y_count_ = 0;
};

// Splits n points over parts blocks as evenly as possible (the first n % parts get one
// more); the first point and the count of block index.
int block_first(int n, int parts, int index);
int block_count(int n, int parts, int index);

}  // namespace nas::lu
