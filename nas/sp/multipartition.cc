// nas/sp/multipartition.cc: cell coordinates, extents and neighbours of the
// multi-partition decomposition (see multipartition.h).
#include "nas/sp/multipartition.h"

#include <cmath>
#include <string>

namespace nas::sp {

Multipartition::Multipartition(int nprocs, int pid, int n) : n_(n), pid_(pid) {
  int q = int(std::lround(std::sqrt(double(nprocs))));
  if (q * q != nprocs)
    throw std::invalid_argument(
        "the multi-partition decomposition needs a square number of processes (1, 4, 9, 16, "
        "...), not " +
        std::to_string(nprocs));
  q_ = q;
  if (n / q < 2)
    throw std::invalid_argument("a " + std::to_string(n) + "^3 grid cannot be cut into " + std::to_string(q) +
                                "^3 cells of at least 2 points; use fewer "
                                "processes");
  max_size_ = extent(0);
  const int x0 = pid % q, y0 = pid / q;
  for (int c = 0; c < q; ++c) {
    Cell cell;
    cell.coord = {(x0 + c) % q, (y0 - c + q * q) % q, c};
    for (int a = 0; a < 3; ++a) {
      cell.low[a] = first(cell.coord[a]);
      cell.size[a] = extent(cell.coord[a]);
    }
    cells_.push_back(cell);
  }
  for (int a = 0; a < 3; ++a) {
    slice_[a].assign(q, 0);
    for (int c = 0; c < q; ++c) slice_[a][cells_[c].coord[a]] = c;
  }
  successor_[0] = (x0 + 1) % q + q * y0;
  predecessor_[0] = (x0 - 1 + q) % q + q * y0;
  successor_[1] = x0 + q * ((y0 + 1) % q);
  predecessor_[1] = x0 + q * ((y0 - 1 + q) % q);
  successor_[2] = (x0 - 1 + q) % q + q * ((y0 + 1) % q);
  predecessor_[2] = (x0 + 1) % q + q * ((y0 - 1 + q) % q);
}

// The first n mod q cells get one point more than the others.
int Multipartition::extent(int position) const { return n_ / q_ + (position < n_ % q_ ? 1 : 0); }

int Multipartition::first(int position) const {
  const int excess = n_ % q_, base = n_ / q_;
  return position < excess ? position * (base + 1) : excess * (base + 1) + (position - excess) * base;
}

}  // namespace nas::sp
