// nas/sp/face_exchange.h: NPB SP's copy_faces in one superstep. Every cell sends the two
// layers of u next to each of its faces that are inside the grid to the cell across that
// face (another process's cell: in a multi-partition neighbouring cells never share an
// owner), packed and put into a slot of the owner's receive area reserved for that
// (cell, axis, side); after the one bsp_sync every process unpacks its slots into the
// ghost layers. With one process there are no neighbours and nothing is exchanged.
#pragma once

#include <vector>

#include "nas/sp/cell_fields.h"
#include "nas/sp/multipartition.h"

namespace nas::sp {

class FaceExchange {
 public:
  // Collective: registers the receive area (and syncs).
  explicit FaceExchange(const Multipartition& mp);
  ~FaceExchange();
  FaceExchange(const FaceExchange&) = delete;
  FaceExchange& operator=(const FaceExchange&) = delete;

  // Collective: refreshes the u ghost layers of every cell (cells[c] is cell c).
  void exchange(std::vector<CellFields>& cells);

 private:
  std::size_t slot(int cell, int axis, int side) const {
    return ((std::size_t(cell) * 3 + axis) * 2 + side) * slot_doubles_;
  }

  const Multipartition& mp_;
  std::size_t slot_doubles_ = 0;
  std::vector<double> send_, receive_;  // receive_ is registered
};

}  // namespace nas::sp
