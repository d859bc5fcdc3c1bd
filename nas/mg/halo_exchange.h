// nas/mg/halo_exchange.h: refreshes the ghost layer of a block from the neighbouring
// blocks (NPB MG's comm3), periodically across the whole grid, in one superstep: each
// process sends each of its 26 neighbours (6 across faces, 12 across edges, 8 across
// corners) the part of its interior that neighbour keeps as ghosts, packed and put as one
// message into that direction's slot of the neighbour's receive area. A neighbour that is
// the process itself (a direction not split over processes) is a local copy. The result
// is the same as NPB's direction-by-direction exchange, with one barrier instead of three.
#pragma once

#include <array>
#include <vector>

#include "nas/mg/grid3.h"
#include "nas/mg/process_grid.h"

namespace nas::mg {

class HaloExchange {
 public:
  // Collective (registers the receive area and syncs). largest: the local array
  // dimensions (ghosts included) of the largest block this process will exchange; every
  // process must pass the same.
  HaloExchange(const ProcessGrid& grid, const std::array<int, 3>& largest);
  ~HaloExchange();
  HaloExchange(const HaloExchange&) = delete;
  HaloExchange& operator=(const HaloExchange&) = delete;

  // Collective: every process calls it for the same level.
  void exchange(const Grid3& block);

 private:
  static constexpr int kDirections = 27;  // (dx, dy, dz) in {-1, 0, 1}^3; the centre unused

  const ProcessGrid& grid_;
  std::array<int, kDirections> neighbour_{};            // pid across each direction
  std::array<std::size_t, kDirections> slot_offset_{};  // in doubles, same on every process
  std::vector<double> send_;
  std::vector<double> receive_;  // registered
};

}  // namespace nas::mg
