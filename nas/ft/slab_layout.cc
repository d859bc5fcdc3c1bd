// nas/ft/slab_layout.cc: slab decomposition and all-to-all transposes (see slab_layout.h).
#include "nas/ft/slab_layout.h"

#include <cstring>
#include <stdexcept>
#include <string>

#include "bsplib/bsp.h"

namespace nas::ft {

SlabLayout::SlabLayout(int nx, int ny, int nz, int nprocs, int pid)
    : nx_(nx), ny_(ny), nz_(nz), nprocs_(nprocs), pid_(pid) {
  if (nprocs < 1 || ny % nprocs != 0 || nz % nprocs != 0) {
    throw std::invalid_argument("FT's slab decomposition needs the process count to divide " + std::to_string(ny) +
                                " and " + std::to_string(nz) + ", not " + std::to_string(nprocs));
  }
}

void SlabLayout::to_frequency_layout(const Complex* space, Complex* frequency) const {
  const std::size_t run = std::size_t(local_rows()) * nx_;  // numbers per (plane, dest)
  if (nprocs_ == 1) {
    if (space != frequency) std::memcpy(frequency, space, local_size() * sizeof(Complex));
    return;
  }
  const int bytes = int(run * sizeof(Complex));
  for (int step = 1; step <= nprocs_; ++step) {  // others first, staggered; self last
    const int dest = (pid_ + step) % nprocs_;
    for (int plane = 0; plane < local_planes(); ++plane) {
      const Complex* source = space + (std::size_t(plane) * ny_ + std::size_t(dest) * local_rows()) * nx_;
      const std::size_t target = std::size_t(first_plane() + plane) * run;  // in dest's array
      if (dest == pid_) {
        std::memcpy(frequency + target, source, run * sizeof(Complex));
      } else {
        bsp_hpput(dest, source, frequency, int(target * sizeof(Complex)), bytes);
      }
    }
  }
  bsp_sync();
}

void SlabLayout::to_space_layout(const Complex* frequency, Complex* space) const {
  const std::size_t run = std::size_t(local_rows()) * nx_;
  if (nprocs_ == 1) {
    if (space != frequency) std::memcpy(space, frequency, local_size() * sizeof(Complex));
    return;
  }
  const int bytes = int(run * sizeof(Complex));
  for (int step = 1; step <= nprocs_; ++step) {
    const int dest = (pid_ + step) % nprocs_;
    for (int plane = 0; plane < local_planes(); ++plane) {
      const int z = dest * local_planes() + plane;
      const Complex* source = frequency + std::size_t(z) * run;
      const std::size_t target = (std::size_t(plane) * ny_ + std::size_t(first_row())) * nx_;
      if (dest == pid_) {
        std::memcpy(space + target, source, run * sizeof(Complex));
      } else {
        bsp_hpput(dest, source, space, int(target * sizeof(Complex)), bytes);
      }
    }
  }
  bsp_sync();
}

}  // namespace nas::ft
