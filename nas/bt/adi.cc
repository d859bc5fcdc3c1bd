// nas/bt/adi.cc: the BSP formulation of BT's time step (see adi.h): the copy_faces
// superstep and the pipelined multi-partition line sweeps.
#include "nas/bt/adi.h"

#include <algorithm>
#include <cstddef>

#include "bsplib/bsp.h"
#include "nas/bt/compute_rhs.h"

namespace nas::bt {

namespace {

// Points [lo, hi] of a cell along each axis.
struct Box {
  int lo[3], hi[3];
};

// The two layers of cell points next to the face on (axis, side), or the two ghost
// layers beyond it.
Box face_box(const Cell& c, int axis, int side, bool ghost) {
  Box b;
  for (int a = 0; a < 3; ++a) {
    b.lo[a] = 0;
    b.hi[a] = c.extent.size[a] - 1;
  }
  const int size = c.extent.size[axis];
  if (side < 0) {
    b.lo[axis] = ghost ? -2 : 0;
  } else {
    b.lo[axis] = ghost ? size : size - 2;
  }
  b.hi[axis] = b.lo[axis] + 1;
  return b;
}

template <typename F>
void for_each_row(const Cell& c, const Box& b, F&& f) {
  const int length = 5 * (b.hi[0] - b.lo[0] + 1);
  for (int k = b.lo[2]; k <= b.hi[2]; ++k)
    for (int j = b.lo[1]; j <= b.hi[1]; ++j) f(5 * c.at(b.lo[0], j, k), length);
}

bool has_neighbour(const Cell& c, int axis, int side, int n) {
  return side < 0 ? c.extent.start[axis] > 0 : c.extent.start[axis] + c.extent.size[axis] < n;
}

int slot_index(int cell, int axis, int side) { return cell * 6 + axis * 2 + (side < 0 ? 0 : 1); }

// Interior index range [lo, hi] of a cell along an axis (global points 1..n-2).
void interior(const Cell& c, int axis, int n, int& lo, int& hi) {
  const int s = c.extent.start[axis], size = c.extent.size[axis];
  lo = s >= 1 ? 0 : 1 - s;
  hi = s + size - 1 <= n - 2 ? size - 1 : n - 2 - s;
}

}  // namespace

Adi::Adi(const MultiPartition& mp, std::vector<Cell>& cells, const Constants& k)
    : mp_(mp),
      cells_(cells),
      k_(k),
      x_(k, (k.n + mp.q() - 1) / mp.q()),
      y_(k, (k.n + mp.q() - 1) / mp.q()),
      z_(k, (k.n + mp.q() - 1) / mp.q()) {
  const int q = mp.q();
  const int max_face = mp.max_face_points();
  const int largest = (k.n + q - 1) / q;
  face_slot_ = 2 * 5 * max_face;
  face_send_.assign(std::size_t(q) * 6 * face_slot_, 0.0);
  face_recv_.assign(std::size_t(q) * 6 * face_slot_, 0.0);
  solve_send_.assign(std::size_t(kForwardCarry) * max_face, 0.0);
  solve_recv_.assign(std::size_t(kForwardCarry) * max_face, 0.0);
  line_store_.assign(25 * std::size_t(largest), 0.0);
  if (q > 1)
    for (Cell& c : cells_)
      c.lhs_c.assign(25 * std::size_t(c.extent.size[0]) * c.extent.size[1] * c.extent.size[2], 0.0);
  bsp_push_reg(face_recv_.data(), bsp_size_t(face_recv_.size() * sizeof(double)));
  bsp_push_reg(solve_recv_.data(), bsp_size_t(solve_recv_.size() * sizeof(double)));
  bsp_sync();
}

Adi::~Adi() {
  bsp_pop_reg(solve_recv_.data());
  bsp_pop_reg(face_recv_.data());
}

void Adi::copy_faces() {
  const int q = mp_.q(), n = k_.n;
  if (q == 1) return;  // one cell: no neighbours
  // Pack and put every face with a neighbour cell: one superstep for all of them.
  for (int ci = 0; ci < q; ++ci) {
    const Cell& c = cells_[ci];
    for (int axis = 0; axis < 3; ++axis)
      for (int side = -1; side <= 1; side += 2) {
        if (!has_neighbour(c, axis, side, n)) continue;
        double* out = &face_send_[std::size_t(slot_index(ci, axis, side)) * face_slot_];
        double* cursor = out;
        for_each_row(c, face_box(c, axis, side, false), [&](std::ptrdiff_t at, int length) {
          std::copy_n(&c.u[at], length, cursor);
          cursor += length;
        });
        const int target_cell = mp_.neighbour_cell(axis, side, ci);
        const std::size_t offset = std::size_t(slot_index(target_cell, axis, -side)) * face_slot_;
        bsp_put(mp_.neighbour(axis, side), out, face_recv_.data(), bsp_size_t(offset * sizeof(double)),
                bsp_size_t((cursor - out) * sizeof(double)));
      }
  }
  bsp_sync();
  for (int ci = 0; ci < q; ++ci) {
    Cell& c = cells_[ci];
    for (int axis = 0; axis < 3; ++axis)
      for (int side = -1; side <= 1; side += 2) {
        if (!has_neighbour(c, axis, side, n)) continue;
        const double* cursor = &face_recv_[std::size_t(slot_index(ci, axis, side)) * face_slot_];
        for_each_row(c, face_box(c, axis, side, true), [&](std::ptrdiff_t at, int length) {
          std::copy_n(cursor, length, &c.u[at]);
          cursor += length;
        });
      }
  }
}

void Adi::copy_faces_and_rhs() {
  copy_faces();
  for (Cell& c : cells_) compute_rhs(c, k_);
}

template <int A>
void Adi::sweep(LineSolver<A>& solver) {
  constexpr int a1 = A == 0 ? 1 : 0, a2 = A == 2 ? 1 : 2;  // the other two axes
  const int q = mp_.q(), n = k_.n;
  const int successor = mp_.neighbour(A, +1), predecessor = mp_.neighbour(A, -1);
  const bsp_size_t dbl = sizeof(double);
  // The lines of a cell: interior points of the two other axes, numbered in order.
  auto for_each_line = [&](Cell& c, auto&& f) {
    int lo1, hi1, lo2, hi2;
    interior(c, a1, n, lo1, hi1);
    interior(c, a2, n, lo2, hi2);
    int index = 0;
    for (int l2 = lo2; l2 <= hi2; ++l2)
      for (int l1 = lo1; l1 <= hi1; ++l1) f(l1, l2, index++);
    return index;
  };
  // Forward elimination, stage s on the cell at coordinate s along A.
  for (int s = 0; s < q; ++s) {
    Cell& c = cells_[mp_.cell_at_stage(A, s)];
    const bool first = s == 0, last = s == q - 1;
    const std::size_t line_points = c.extent.size[A];
    const int lines = for_each_line(c, [&](int l1, int l2, int index) {
      const double* in = first ? nullptr : &solve_recv_[std::size_t(kForwardCarry) * index];
      if (!last) {
        double* store = &c.lhs_c[25 * line_points * index];
        solver.forward(c, l1, l2, store, in, &solve_send_[std::size_t(kForwardCarry) * index]);
      } else {
        // The last cell of the line: back substitution at once, C' still in cache.
        solver.forward(c, l1, l2, line_store_.data(), in, nullptr);
        solver.backward(c, l1, l2, line_store_.data(), nullptr,
                        first ? nullptr : &solve_send_[std::size_t(kBackwardCarry) * index]);
      }
    });
    if (!last) {
      bsp_put(successor, solve_send_.data(), solve_recv_.data(), 0, bsp_size_t(kForwardCarry * lines) * dbl);
      bsp_sync();
    } else if (!first) {
      bsp_put(predecessor, solve_send_.data(), solve_recv_.data(), 0, bsp_size_t(kBackwardCarry * lines) * dbl);
      bsp_sync();
    }
  }
  // Back substitution on the remaining cells, from the end of the line to its start.
  for (int s = q - 2; s >= 0; --s) {
    Cell& c = cells_[mp_.cell_at_stage(A, s)];
    const std::size_t line_points = c.extent.size[A];
    const int lines = for_each_line(c, [&](int l1, int l2, int index) {
      solver.backward(c, l1, l2, &c.lhs_c[25 * line_points * index], &solve_recv_[std::size_t(kBackwardCarry) * index],
                      s > 0 ? &solve_send_[std::size_t(kBackwardCarry) * index] : nullptr);
    });
    if (s > 0) {
      bsp_put(predecessor, solve_send_.data(), solve_recv_.data(), 0, bsp_size_t(kBackwardCarry * lines) * dbl);
      bsp_sync();
    }
  }
}

void Adi::add() {
  const int n = k_.n;
  for (Cell& c : cells_) {
    int lo[3], hi[3];
    for (int a = 0; a < 3; ++a) interior(c, a, n, lo[a], hi[a]);
    for (int k = lo[2]; k <= hi[2]; ++k)
      for (int j = lo[1]; j <= hi[1]; ++j) {
        const std::ptrdiff_t row = 5 * c.at(0, j, k);
        double* u = c.u.data() + row;
        const double* r = c.rhs.data() + row;
        for (int i = 5 * lo[0]; i < 5 * (hi[0] + 1); ++i) u[i] = u[i] + r[i];
      }
  }
}

void Adi::step() {
  copy_faces_and_rhs();
  sweep(x_);
  sweep(y_);
  sweep(z_);
  add();
}

}  // namespace nas::bt
