// nas/ft/fft3d.h: the distributed 3-D FFT of NPB FT over the slab decomposition:
// forward = x and y FFTs in the space layout, transpose, z FFT in the frequency layout;
// backward = z FFT, transpose back, y and x FFTs. Collective (one superstep each when
// p > 1), unnormalised, sign +1 forward as in NPB.
#pragma once

#include "nas/ft/slab_layout.h"
#include "nas/ft/stockham_fft.h"

namespace nas::ft {

class Fft3d {
 public:
  explicit Fft3d(const SlabLayout& layout);

  // space (overwritten) -> frequency, which must be registered when p > 1.
  void forward(Complex* space, Complex* frequency);
  // frequency (overwritten) -> space, which must be registered when p > 1. On one
  // process they may be the same array.
  void backward(Complex* frequency, Complex* space);

 private:
  void xy_transforms(int sign, Complex* space);
  void z_transforms(int sign, Complex* frequency);

  const SlabLayout& layout_;
  FftRoots x_roots_, y_roots_, z_roots_;
  FftScratch scratch_;
};

}  // namespace nas::ft
