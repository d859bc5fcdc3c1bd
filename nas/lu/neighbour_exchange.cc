// nas/lu/neighbour_exchange.cc: puts of ghost layers and sweep faces (see
// neighbour_exchange.h).
#include "nas/lu/neighbour_exchange.h"

#include <algorithm>

#include "bsplib/bsp.h"

namespace nas::lu {
namespace {

Side opposite(Side s) { return Side(s ^ 1); }
bool along_x(Side s) { return s == kXLow || s == kXHigh; }

}  // namespace

NeighbourExchange::NeighbourExchange(const ProcessGrid& grid, const LocalFields& fields) : f_(fields) {
  neighbour_[kXLow] = grid.x_low();
  neighbour_[kXHigh] = grid.x_high();
  neighbour_[kYLow] = grid.y_low();
  neighbour_[kYHigh] = grid.y_high();
  const std::size_t x_face = std::size_t(2) * fields.nz0 * fields.nyl * 5;
  const std::size_t y_face = std::size_t(2) * fields.nz0 * fields.nxl * 5;
  for (int s = 0; s < 4; ++s) {
    receive_[s].assign(along_x(Side(s)) ? x_face : y_face, 0.0);
    bsp_push_reg(receive_[s].data(), bsp_size_t(receive_[s].size() * sizeof(double)));
    ghost_receive_[s].assign(along_x(Side(s)) ? x_face : y_face, 0.0);
    bsp_push_reg(ghost_receive_[s].data(), bsp_size_t(ghost_receive_[s].size() * sizeof(double)));
  }
  send_.assign(std::max(x_face, y_face), 0.0);
  bsp_sync();
}

NeighbourExchange::~NeighbourExchange() {
  for (int s = 0; s < 4; ++s) {
    bsp_pop_reg(receive_[s].data());
    bsp_pop_reg(ghost_receive_[s].data());
  }
}

std::size_t NeighbourExchange::pack(Side side, const double* field, int index, int layers, int k0, int k1,
                                    double* buf) const {
  const LocalFields& f = f_;
  double* out = buf;
  for (int k = k0; k <= k1; ++k) {
    if (along_x(side)) {
      for (int j = f.jown0(); j <= f.jown1(); ++j)
        for (int l = 0; l < layers; ++l) {
          const double* v = field + 5 * f.point(k, j, index + l);
          for (int m = 0; m < 5; ++m) *out++ = v[m];
        }
    } else {
      for (int l = 0; l < layers; ++l) {
        const double* v = field + 5 * f.point(k, index + l, f.iown0());
        out = std::copy(v, v + 5 * f.nxl, out);
      }
    }
  }
  return std::size_t(out - buf);
}

void NeighbourExchange::unpack(Side side, double* field, int index, int layers, int k0, int k1,
                               const double* buf) const {
  const LocalFields& f = f_;
  const double* in = buf;
  for (int k = k0; k <= k1; ++k) {
    if (along_x(side)) {
      for (int j = f.jown0(); j <= f.jown1(); ++j)
        for (int l = 0; l < layers; ++l) {
          double* v = field + 5 * f.point(k, j, index + l);
          for (int m = 0; m < 5; ++m) v[m] = *in++;
        }
    } else {
      for (int l = 0; l < layers; ++l) {
        double* v = field + 5 * f.point(k, index + l, f.iown0());
        std::copy(in, in + 5 * f.nxl, v);
        in += 5 * f.nxl;
      }
    }
  }
}

void NeighbourExchange::exchange_ghosts(double* field) {
  if (bsp_nprocs() == 1) return;
  post_ghosts(field);
  bsp_sync();
  collect_ghosts(field);
}

void NeighbourExchange::post_ghosts(const double* field) {
  const LocalFields& f = f_;
  // The two owned layers nearest each side go to that side's neighbour.
  const int first_owned[4] = {f.iown0(), f.iown1() - 1, f.jown0(), f.jown1() - 1};
  for (int s = 0; s < 4; ++s) {
    const Side side = Side(s);
    if (neighbour_[s] < 0) continue;
    const std::size_t n = pack(side, field, first_owned[s], 2, 0, f.nz0 - 1, send_.data());
    bsp_put(neighbour_[s], send_.data(), ghost_receive_[opposite(side)].data(), 0, bsp_size_t(n * sizeof(double)));
  }
}

void NeighbourExchange::collect_ghosts(double* field) {
  const LocalFields& f = f_;
  // What the neighbour on a side sent lands in the two ghost layers beyond that side.
  const int ghost_first[4] = {f.iown0() - 2, f.iown1() + 1, f.jown0() - 2, f.jown1() + 1};
  for (int s = 0; s < 4; ++s)
    if (neighbour_[s] >= 0) unpack(Side(s), field, ghost_first[s], 2, 0, f.nz0 - 1, ghost_receive_[s].data());
}

void NeighbourExchange::send_face(Side side, const double* field, int index, int k0, int k1) {
  if (neighbour_[side] < 0) return;
  const std::size_t n = pack(side, field, index, 1, k0, k1, send_.data());
  bsp_put(neighbour_[side], send_.data(), receive_[opposite(side)].data(), 0, bsp_size_t(n * sizeof(double)));
}

void NeighbourExchange::receive_face(Side side, double* field, int index, int k0, int k1) {
  if (neighbour_[side] < 0) return;
  unpack(side, field, index, 1, k0, k1, receive_[side].data());
}

}  // namespace nas::lu
