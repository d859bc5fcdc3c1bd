// nas/mg/grid3.h: a view of one process's block of an MG grid level: a contiguous array
// of m1 x m2 x m3 doubles (i1 fastest) whose outer layer of points is the ghost layer
// holding copies of the neighbours' boundary points (periodic across the whole grid).
// The interior is 1..m-2 in each direction.
#pragma once

#include <cstddef>

namespace nas::mg {

struct Grid3 {
  double* data = nullptr;
  int m1 = 0, m2 = 0, m3 = 0;

  std::size_t size() const { return std::size_t(m1) * m2 * m3; }
  std::size_t index(int i1, int i2, int i3) const {
    return std::size_t(i1) + std::size_t(m1) * (std::size_t(i2) + std::size_t(m2) * i3);
  }
  double& at(int i1, int i2, int i3) const { return data[index(i1, i2, i3)]; }
  // Pointer to the line (*, i2, i3).
  double* line(int i2, int i3) const { return data + index(0, i2, i3); }
};

}  // namespace nas::mg
