// nas/mg/halo_exchange.cc: one-superstep ghost-layer exchange by puts (see
// halo_exchange.h).
#include "nas/mg/halo_exchange.h"

#include "bsplib/bsp.h"

namespace nas::mg {
namespace {

// A box of points [lo, hi] (inclusive) per direction.
struct Box {
  std::array<int, 3> lo, hi;
  std::size_t size() const { return std::size_t(hi[0] - lo[0] + 1) * (hi[1] - lo[1] + 1) * (hi[2] - lo[2] + 1); }
};

std::array<int, 3> offset_of(int direction) { return {direction % 3 - 1, (direction / 3) % 3 - 1, direction / 9 - 1}; }

// The interior points a block sends towards its neighbour at offset d...
Box source_box(const std::array<int, 3>& m, const std::array<int, 3>& d) {
  Box box;
  for (int a = 0; a < 3; ++a) {
    box.lo[a] = d[a] == +1 ? m[a] - 2 : 1;
    box.hi[a] = d[a] == -1 ? 1 : m[a] - 2;
  }
  return box;
}

// ...and the ghost points where that neighbour keeps them (it sees the sender at -d).
Box ghost_box(const std::array<int, 3>& m, const std::array<int, 3>& d) {
  Box box;
  for (int a = 0; a < 3; ++a) {
    box.lo[a] = d[a] == -1 ? m[a] - 1 : d[a] == +1 ? 0 : 1;
    box.hi[a] = d[a] == -1 ? m[a] - 1 : d[a] == +1 ? 0 : m[a] - 2;
  }
  return box;
}

template <typename F>
void for_each_line(const Grid3& g, const Box& box, F&& f) {
  const int length = box.hi[0] - box.lo[0] + 1;
  for (int i3 = box.lo[2]; i3 <= box.hi[2]; ++i3)
    for (int i2 = box.lo[1]; i2 <= box.hi[1]; ++i2) f(&g.at(box.lo[0], i2, i3), length);
}

void pack(const Grid3& g, const Box& box, double* out) {
  for_each_line(g, box, [&out](const double* line, int n) {
    for (int i = 0; i < n; ++i) *out++ = line[i];
  });
}

void unpack(const Grid3& g, const Box& box, const double* in) {
  for_each_line(g, box, [&in](double* line, int n) {
    for (int i = 0; i < n; ++i) line[i] = *in++;
  });
}

void copy_box(const Grid3& g, const Box& from, const Box& to) {
  const int length = from.hi[0] - from.lo[0] + 1;
  for (int k3 = 0; k3 <= from.hi[2] - from.lo[2]; ++k3)
    for (int k2 = 0; k2 <= from.hi[1] - from.lo[1]; ++k2) {
      const double* source = &g.at(from.lo[0], from.lo[1] + k2, from.lo[2] + k3);
      double* target = &g.at(to.lo[0], to.lo[1] + k2, to.lo[2] + k3);
      for (int i = 0; i < length; ++i) target[i] = source[i];
    }
}

}  // namespace

HaloExchange::HaloExchange(const ProcessGrid& grid, const std::array<int, 3>& largest) : grid_(grid) {
  std::size_t total = 0;
  for (int t = 0; t < kDirections; ++t) {
    const std::array<int, 3> d = offset_of(t);
    slot_offset_[t] = total;
    if (d == std::array<int, 3>{0, 0, 0}) continue;
    neighbour_[t] = grid.neighbour_at(d);
    total += source_box(largest, d).size();
  }
  send_.assign(total, 0.0);
  receive_.assign(total, 0.0);
  bsp_push_reg(receive_.data(), int(total * sizeof(double)));
  bsp_sync();
}

HaloExchange::~HaloExchange() { bsp_pop_reg(receive_.data()); }

void HaloExchange::exchange(const Grid3& g) {
  const std::array<int, 3> m{g.m1, g.m2, g.m3};
  const int me = grid_.pid();
  for (int t = 0; t < kDirections; ++t) {
    const std::array<int, 3> d = offset_of(t);
    if (d == std::array<int, 3>{0, 0, 0}) continue;
    const Box source = source_box(m, d);
    if (neighbour_[t] == me) {  // periodic onto itself along every split-free direction
      copy_box(g, source, ghost_box(m, d));
      continue;
    }
    double* packed = send_.data() + slot_offset_[t];
    pack(g, source, packed);
    bsp_put(neighbour_[t], packed, receive_.data(), int(slot_offset_[t] * sizeof(double)),
            int(source.size() * sizeof(double)));
  }
  if (grid_.nprocs() == 1) return;
  bsp_sync();
  for (int t = 0; t < kDirections; ++t) {
    const std::array<int, 3> d = offset_of(t);
    if (d == std::array<int, 3>{0, 0, 0} || neighbour_[t] == me) continue;
    // Slot t holds what the neighbour at -d sent towards +d: this block's ghosts on the
    // -d side, i.e. the ghost box that a sender towards d fills.
    unpack(g, ghost_box(m, d), receive_.data() + slot_offset_[t]);
  }
}

}  // namespace nas::mg
