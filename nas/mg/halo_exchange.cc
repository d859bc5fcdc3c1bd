// nas/mg/halo_exchange.cc: ghost-layer exchange by puts, one superstep per split
// direction (see halo_exchange.h).
#include "nas/mg/halo_exchange.h"

#include <cstring>

#include "bsplib/bsp.h"

namespace nas::mg {
namespace {

// Visits the face of block at index `layer` across direction d (ghosts of earlier
// directions included, those of later ones not), calling f(point_reference) in a fixed
// order; the same order packs and unpacks.
template <typename F>
void for_each_face_point(const Grid3& g, int d, int layer, F&& f) {
  if (d == 0) {
    for (int i3 = 1; i3 < g.m3 - 1; ++i3)
      for (int i2 = 1; i2 < g.m2 - 1; ++i2) f(g.at(layer, i2, i3));
  } else if (d == 1) {
    for (int i3 = 1; i3 < g.m3 - 1; ++i3) {
      double* line = g.line(layer, i3);
      for (int i1 = 0; i1 < g.m1; ++i1) f(line[i1]);
    }
  } else {
    double* plane = g.data + g.index(0, 0, layer);
    const std::size_t count = std::size_t(g.m1) * g.m2;
    for (std::size_t i = 0; i < count; ++i) f(plane[i]);
  }
}

std::size_t face_size(const Grid3& g, int d) {
  if (d == 0) return std::size_t(g.m2 - 2) * (g.m3 - 2);
  if (d == 1) return std::size_t(g.m1) * (g.m3 - 2);
  return std::size_t(g.m1) * g.m2;
}

int width(const Grid3& g, int d) { return d == 0 ? g.m1 : d == 1 ? g.m2 : g.m3; }

}  // namespace

HaloExchange::HaloExchange(const ProcessGrid& grid, std::size_t largest_face)
    : grid_(grid), largest_face_(largest_face), send_(2 * largest_face),
      receive_(2 * largest_face) {
  bsp_push_reg(receive_.data(), int(receive_.size() * sizeof(double)));
  bsp_sync();
}

HaloExchange::~HaloExchange() { bsp_pop_reg(receive_.data()); }

void HaloExchange::exchange(const Grid3& block) {
  for (int d = 0; d < 3; ++d) exchange_direction(block, d);
}

void HaloExchange::exchange_direction(const Grid3& g, int d) {
  const int m = width(g, d);
  if (grid_.extent(d) == 1) {  // periodic onto itself: ghost <- opposite interior face
    double* low = send_.data();
    double* high = send_.data() + largest_face_;
    for_each_face_point(g, d, 1, [&low](double& x) { *low++ = x; });
    for_each_face_point(g, d, m - 2, [&high](double& x) { *high++ = x; });
    const double* from_high_side = send_.data();
    const double* from_low_side = send_.data() + largest_face_;
    for_each_face_point(g, d, 0, [&from_low_side](double& x) { x = *from_low_side++; });
    for_each_face_point(g, d, m - 1, [&from_high_side](double& x) { x = *from_high_side++; });
    return;
  }
  const std::size_t n = face_size(g, d);
  double* low = send_.data();
  double* high = send_.data() + largest_face_;
  for_each_face_point(g, d, 1, [&low](double& x) { *low++ = x; });
  for_each_face_point(g, d, m - 2, [&high](double& x) { *high++ = x; });
  const int bytes = int(n * sizeof(double));
  // My low interior face becomes the high ghost of the neighbour below, and vice versa.
  bsp_put(grid_.neighbour(d, -1), send_.data(), receive_.data(),
          int(largest_face_ * sizeof(double)), bytes);
  bsp_put(grid_.neighbour(d, +1), send_.data() + largest_face_, receive_.data(), 0, bytes);
  bsp_sync();
  const double* for_low_ghost = receive_.data();
  const double* for_high_ghost = receive_.data() + largest_face_;
  for_each_face_point(g, d, 0, [&for_low_ghost](double& x) { x = *for_low_ghost++; });
  for_each_face_point(g, d, m - 1, [&for_high_ghost](double& x) { x = *for_high_ghost++; });
}

}  // namespace nas::mg
