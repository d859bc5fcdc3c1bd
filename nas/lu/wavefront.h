// nas/lu/wavefront.h: the BSP schedule of SSOR's two triangular sweeps over the 2-D
// process grid. The interior k-planes are cut into blocks of `planes_per_block`; in the
// lower sweep process (cx, cy) solves block b in superstep cx + cy + b, then puts the
// block's faces at its high-x and high-y edges to those neighbours, which need them one
// superstep later (the upper sweep runs the mirror image, from the high corner, k
// descending). A sweep therefore costs nblocks + px + py - 2 supersteps, each carrying
// one face of a block per neighbour, instead of one message per k-plane and neighbour.
#pragma once

#include <functional>

#include "nas/lu/coefficients.h"
#include "nas/lu/local_fields.h"
#include "nas/lu/neighbour_exchange.h"
#include "nas/lu/process_grid.h"

namespace nas::lu {

class Wavefront {
 public:
  // Points of a block (planes x the widest process's plane) the default pipeline keeps
  // at least in each superstep when every process has a core of its own.
  static constexpr long kFinePoints = 4096;

  // planes_per_block <= 0 chooses a default from the grid shape and `cores`, the CPUs
  // this process may run on (0: unknown, taken as fewer than the processes; see
  // wavefront.cc).
  Wavefront(const ProcessGrid& grid, int nz0, int planes_per_block, int cores = 0);

  int planes_per_block() const { return block_; }
  int blocks() const { return blocks_; }
  int supersteps_per_sweep() const;

  // rsd <- L^-1 rsd and rsd <- U^-1 rsd over all interior planes. Collective.
  void lower_sweep(LocalFields& f, const Coefficients& c, NeighbourExchange& x) const;
  // finished, when given, runs on this process right after its last upper block (its rsd
  // is then final), inside that block's superstep: SSOR updates u there and posts u's
  // ghost layers, saving the superstep of a separate exchange.
  void upper_sweep(LocalFields& f, const Coefficients& c, NeighbourExchange& x,
                   const std::function<void()>& finished = {}) const;

 private:
  int px_, py_, cx_, cy_, nz0_;
  int block_, blocks_;
};

}  // namespace nas::lu
