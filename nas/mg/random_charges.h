// nas/mg/random_charges.h: MG's right-hand side (NPB zran3): the grid is filled with
// NPB's pseudo-random sequence (x0 = 314159265, a = 5^13, one number per point in
// x-fastest global order), then set to zero except +1 at the ten largest numbers and -1
// at the ten smallest. Each process generates only its own block, jumping the generator
// to the block's first point; the candidates are then chosen globally in one superstep.
#pragma once

#include "nas/mg/grid3.h"
#include "nas/mg/halo_exchange.h"
#include "nas/mg/process_grid.h"

namespace nas::mg {

// Collective. z: this process's block of the finest level, global width n per direction.
// Leaves z with its ghost layer exchanged.
void fill_random_charges(const Grid3& z, int n, const ProcessGrid& grid, HaloExchange& halo);

}  // namespace nas::mg
