// nas/lu/process_grid.cc: LU's 2-D process grid (see process_grid.h).
#include "nas/lu/process_grid.h"

#include <stdexcept>
#include <string>

namespace nas::lu {

int block_first(int n, int parts, int index) {
  const int base = n / parts, extra = n % parts;
  return index * base + (index < extra ? index : extra);
}

int block_count(int n, int parts, int index) { return n / parts + (index < n % parts ? 1 : 0); }

ProcessGrid::ProcessGrid(int nprocs, int pid, int nx0, int ny0) {
  if (nprocs < 1 || (nprocs & (nprocs - 1)) != 0)
    throw std::invalid_argument("LU needs a power-of-two number of processes (1, 2, 4, 8, 16, ...), got " +
                                std::to_string(nprocs));
  int d = 0;
  while ((1 << d) < nprocs) ++d;
  px_ = 1 << ((d + 1) / 2);
  py_ = nprocs / px_;
  cx_ = pid % px_;
  cy_ = pid / px_;
  if (nx0 / px_ < 2 || ny0 / py_ < 2)
    throw std::invalid_argument("a " + std::to_string(nx0) + "x" + std::to_string(ny0) + " grid cannot be split over " +
                                std::to_string(px_) + "x" + std::to_string(py_) +
                                " processes (each needs at least 2 points per direction)");
  x_first_ = block_first(nx0, px_, cx_);
  x_count_ = block_count(nx0, px_, cx_);
  y_first_ = block_first(ny0, py_, cy_);
  y_count_ = block_count(ny0, py_, cy_);
}

}  // namespace nas::lu
