// nas/mg/halo_exchange.h: refreshes the ghost layer of a block from the neighbouring
// blocks (NPB MG's comm3), periodically across the whole grid. Directions are done one
// after another, x then y then z, each including the ghosts already refreshed, so edges
// and corners come out right. A direction split over several processes costs one
// superstep: each process packs its two boundary faces and puts each, as one message,
// into the receive area of the neighbour on that side; a direction held by one process
// is a local copy.
#pragma once

#include <vector>

#include "nas/mg/grid3.h"
#include "nas/mg/process_grid.h"

namespace nas::mg {

class HaloExchange {
 public:
  // Collective (registers the receive area and syncs). largest_face: the most doubles in
  // any face of any block this process will exchange.
  HaloExchange(const ProcessGrid& grid, std::size_t largest_face);
  ~HaloExchange();
  HaloExchange(const HaloExchange&) = delete;
  HaloExchange& operator=(const HaloExchange&) = delete;

  // Collective: every process calls it for the same level.
  void exchange(const Grid3& block);

 private:
  void exchange_direction(const Grid3& block, int d);

  const ProcessGrid& grid_;
  std::size_t largest_face_;
  std::vector<double> send_;     // [low face | high face]
  std::vector<double> receive_;  // [for my low ghost | for my high ghost], registered
};

}  // namespace nas::mg
