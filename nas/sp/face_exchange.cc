// nas/sp/face_exchange.cc: the one-superstep ghost exchange of u (see face_exchange.h).
#include "nas/sp/face_exchange.h"

#include "bsplib/bsp.h"

namespace nas::sp {
namespace {

struct Box {
  int lo[3], hi[3];
  std::size_t size() const { return std::size_t(hi[0] - lo[0] + 1) * (hi[1] - lo[1] + 1) * (hi[2] - lo[2] + 1); }
};

// The two layers a cell sends across its face (axis, side: 0 low, 1 high)...
Box interior_layers(const Cell& c, int axis, int side) {
  Box b;
  for (int a = 0; a < 3; ++a) b.lo[a] = 0, b.hi[a] = c.size[a] - 1;
  b.lo[axis] = side ? c.size[axis] - kGhost : 0;
  b.hi[axis] = side ? c.size[axis] - 1 : kGhost - 1;
  return b;
}

// ...and the ghost layers beyond that face, where the neighbour's layers are kept.
Box ghost_layers(const Cell& c, int axis, int side) {
  Box b;
  for (int a = 0; a < 3; ++a) b.lo[a] = 0, b.hi[a] = c.size[a] - 1;
  b.lo[axis] = side ? c.size[axis] : -kGhost;
  b.hi[axis] = side ? c.size[axis] + kGhost - 1 : -1;
  return b;
}

template <typename F>
void for_each_point(const CellFields& f, const Box& b, F&& visit) {
  for (int k = b.lo[2]; k <= b.hi[2]; ++k)
    for (int j = b.lo[1]; j <= b.hi[1]; ++j)
      for (int i = b.lo[0]; i <= b.hi[0]; ++i) visit(f.at(i, j, k));
}

}  // namespace

FaceExchange::FaceExchange(const Multipartition& mp) : mp_(mp) {
  const std::size_t m = mp.max_cell_size();
  slot_doubles_ = 5 * kGhost * m * m;
  const std::size_t total = mp.q() > 1 ? std::size_t(mp.q()) * 6 * slot_doubles_ : 1;
  send_.assign(total, 0.0);
  receive_.assign(total, 0.0);
  bsp_push_reg(receive_.data(), int(total * sizeof(double)));
  bsp_sync();
}

FaceExchange::~FaceExchange() { bsp_pop_reg(receive_.data()); }

void FaceExchange::exchange(std::vector<CellFields>& cells) {
  const int q = mp_.q();
  if (q == 1) return;
  for (int c = 0; c < q; ++c) {
    const CellFields& f = cells[c];
    for (int axis = 0; axis < 3; ++axis)
      for (int side = 0; side < 2; ++side) {
        const int neighbour_coord = f.cell.coord[axis] + (side ? 1 : -1);
        if (neighbour_coord < 0 || neighbour_coord >= q) continue;  // grid boundary
        const int owner = side ? mp_.successor(axis) : mp_.predecessor(axis);
        // Along z the neighbour is the owner's next (or previous) cell; along x and y the
        // owner's cell with the same index.
        const int their_cell = axis == 2 ? c + (side ? 1 : -1) : c;
        const Box box = interior_layers(f.cell, axis, side);
        double* packed = send_.data() + slot(c, axis, side);
        double* out = packed;
        for_each_point(f, box, [&](std::size_t p) {
          for (int m = 0; m < 5; ++m) *out++ = f.u[m * f.cstride + p];
        });
        bsp_put(owner, packed, receive_.data(), int(slot(their_cell, axis, 1 - side) * sizeof(double)),
                int(5 * box.size() * sizeof(double)));
      }
  }
  bsp_sync();
  for (int c = 0; c < q; ++c) {
    CellFields& f = cells[c];
    for (int axis = 0; axis < 3; ++axis)
      for (int side = 0; side < 2; ++side) {
        const int neighbour_coord = f.cell.coord[axis] + (side ? 1 : -1);
        if (neighbour_coord < 0 || neighbour_coord >= q) continue;
        const double* in = receive_.data() + slot(c, axis, side);
        for_each_point(f, ghost_layers(f.cell, axis, side), [&](std::size_t p) {
          for (int m = 0; m < 5; ++m) f.u[m * f.cstride + p] = *in++;
        });
      }
  }
}

}  // namespace nas::sp
