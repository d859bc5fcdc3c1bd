// nas/lu/neighbour_exchange.h: LU's communication with the (up to four) neighbouring
// processes of the 2-D grid, by bsp_put into registered receive areas, one per side:
//   - the two-deep ghost layers of u before each rhs (one superstep), and
//   - the one-deep faces of rsd that the triangular sweeps pass downstream: a face is
//     packed for a range of k-planes, put, and unpacked by the receiver after the sync
//     (the wavefront schedules those supersteps, see wavefront.h).
// Registration is collective: construct on every process, then it costs one bsp_sync.
// Faces and ghost layers have separate receive areas, so both can be in flight at once.
#pragma once

#include <vector>

#include "nas/lu/local_fields.h"
#include "nas/lu/process_grid.h"

namespace nas::lu {

enum Side { kXLow = 0, kXHigh = 1, kYLow = 2, kYHigh = 3 };

class NeighbourExchange {
 public:
  NeighbourExchange(const ProcessGrid& grid, const LocalFields& fields);
  ~NeighbourExchange();
  NeighbourExchange(const NeighbourExchange&) = delete;
  NeighbourExchange& operator=(const NeighbourExchange&) = delete;

  // Pid of the neighbour on a side, -1 when there is none.
  int neighbour(Side side) const { return neighbour_[side]; }

  // Fills the two ghost layers of a 5-vector field (u) on every side with a neighbour.
  // Collective: one superstep (none when running on one process).
  void exchange_ghosts(double* field);
  // The same in two halves, so the puts can share a superstep with other work: post
  // puts the owned layers (own receive areas, so faces in flight are not disturbed);
  // collect, after a bsp_sync that follows every process's post, stores the ghosts.
  void post_ghosts(const double* field);
  void collect_ghosts(double* field);

  // Puts the face of `field` at local column i (sides kXLow/kXHigh) or row j (kYLow/
  // kYHigh), `index`, for planes k0..k1, to the neighbour on `side`. No-op without one.
  void send_face(Side side, const double* field, int index, int k0, int k1);
  // After the sync: stores what the neighbour on `side` sent into the face `index` of
  // field, planes k0..k1 (the sender's range). No-op without a neighbour there.
  void receive_face(Side side, double* field, int index, int k0, int k1);

 private:
  // Copies `layers` faces starting at `index` for planes k0..k1 between field and buf.
  std::size_t pack(Side side, const double* field, int index, int layers, int k0, int k1, double* buf) const;
  void unpack(Side side, double* field, int index, int layers, int k0, int k1, const double* buf) const;

  const LocalFields& f_;
  int neighbour_[4];
  std::vector<double> receive_[4];        // sweep faces, by the side they come from
  std::vector<double> ghost_receive_[4];  // u's ghost layers, by the side they come from
  std::vector<double> send_;
};

}  // namespace nas::lu
