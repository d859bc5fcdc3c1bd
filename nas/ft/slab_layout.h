// nas/ft/slab_layout.h: FT's 1-D (slab) decomposition and the transposes between its two
// layouts, x always fastest:
//   space layout      [z_local][y][x]   z split over processes (nz/p planes each);
//   frequency layout  [z][y_local][x]   y split over processes (ny/p rows each).
// The x and y FFTs run in the space layout, the z FFT in the frequency layout. A
// transpose is one all-to-all superstep of unbuffered puts (bsp_hpput): the part of a
// z-plane one process sends another is a contiguous run of (ny/p)*nx numbers in both
// layouts, so each goes straight from the source array into the destination array.
// On one process the two layouts coincide and a transpose is at most a copy.
#pragma once

#include "nas/ft/stockham_fft.h"

namespace nas::ft {

class SlabLayout {
 public:
  // Throws std::invalid_argument unless p divides both ny and nz.
  SlabLayout(int nx, int ny, int nz, int nprocs, int pid);

  int nx() const { return nx_; }
  int ny() const { return ny_; }
  int nz() const { return nz_; }
  int nprocs() const { return nprocs_; }
  int pid() const { return pid_; }
  int local_planes() const { return nz_ / nprocs_; }  // z planes in the space layout
  int local_rows() const { return ny_ / nprocs_; }    // y rows in the frequency layout
  int first_plane() const { return pid_ * local_planes(); }
  int first_row() const { return pid_ * local_rows(); }
  // Complex numbers each process holds (the same in both layouts).
  std::size_t local_size() const { return std::size_t(nx_) * ny_ * nz_ / nprocs_; }

  // Collective. space (space layout) -> frequency (frequency layout, registered with
  // bsp_push_reg on every process). On one process, a copy unless they are the same array.
  void to_frequency_layout(const Complex* space, Complex* frequency) const;
  // Collective. frequency -> space (registered), the inverse permutation.
  void to_space_layout(const Complex* frequency, Complex* space) const;

 private:
  int nx_, ny_, nz_, nprocs_, pid_;
};

}  // namespace nas::ft
