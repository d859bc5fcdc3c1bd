// nas/ft/spectral_fields.h: the data of NPB FT apart from the FFTs: the initial field
// (NPB's random stream, two numbers per complex point, each z-plane starting
// 2*nx*ny numbers after the previous one), the exponential decay factors of the
// spectral solution of the diffusion equation ("twiddle"), the time step (evolve), and
// the local part of the checksum of 1024 fixed points. Each works on this process's
// part of the slab decomposition only.
#pragma once

#include "nas/ft/slab_layout.h"

namespace nas::ft {

// space: this process's planes (space layout) of the initial field.
void fill_initial_field(const SlabLayout& layout, Complex* space);

// twiddle (frequency layout): exp(-4 alpha pi^2 (kx^2 + ky^2 + kz^2)), k the signed
// wave numbers, alpha = 1e-6.
void fill_decay_factors(const SlabLayout& layout, double* twiddle);

// One time step: spectrum *= twiddle; work = spectrum (frequency layout, local_size()).
void evolve(const SlabLayout& layout, Complex* spectrum, const double* twiddle, Complex* work);

// Sum over the checksum points (j mod nx, 3j mod ny, 5j mod nz), j = 1..1024, that this
// process holds in the space layout, in increasing j. Not yet divided by the point count.
Complex local_checksum(const SlabLayout& layout, const Complex* space);

}  // namespace nas::ft
