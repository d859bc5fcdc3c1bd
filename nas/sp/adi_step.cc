// nas/sp/adi_step.cc: the supersteps of one SP time step (see adi_step.h).
#include "nas/sp/adi_step.h"

#include "bsplib/bsp.h"
#include "nas/sp/compute_rhs.h"

namespace nas::sp {

namespace {
constexpr int kDoubleBytes = int(sizeof(double));
}  // namespace

AdiStep::AdiStep(const SpConstants& k, const Multipartition& mp, std::vector<CellFields>& cells)
    : k_(k), mp_(mp), cells_(cells), solver_(k, mp.max_cell_size()), faces_(mp) {
  const std::size_t lines = std::size_t(mp.max_cell_size()) * mp.max_cell_size();
  forward_send_.assign(lines * kForwardCarry, 0.0);
  forward_receive_.assign(lines * kForwardCarry, 0.0);
  backward_send_.assign(lines * kBackwardCarry, 0.0);
  backward_receive_.assign(lines * kBackwardCarry, 0.0);
  bsp_push_reg(forward_receive_.data(), int(forward_receive_.size() * sizeof(double)));
  bsp_push_reg(backward_receive_.data(), int(backward_receive_.size() * sizeof(double)));
  bsp_sync();
}

AdiStep::~AdiStep() {
  bsp_pop_reg(backward_receive_.data());
  bsp_pop_reg(forward_receive_.data());
}

void AdiStep::step() {
  faces_.exchange(cells_);
  for (auto& f : cells_) compute_rhs(k_, f, /*apply_txinvr=*/true);
  for (int axis = 0; axis < 3; ++axis) sweep(axis);
}

void AdiStep::residual() {
  faces_.exchange(cells_);
  for (auto& f : cells_) compute_rhs(k_, f, /*apply_txinvr=*/false);
}

void AdiStep::sweep(int axis) {
  const int q = mp_.q(), n = k_.n;
  // Forward elimination, cell position 0 .. q-1 along the axis; the last one also
  // back-substitutes.
  for (int s = 0; s < q; ++s) {
    CellFields& f = cells_[mp_.cell_at(axis, s)];
    const double* carry_in = s > 0 ? forward_receive_.data() : nullptr;
    if (s < q - 1) {
      solver_.forward(f, axis, carry_in, forward_send_.data(), nullptr);
      bsp_put(mp_.successor(axis), forward_send_.data(), forward_receive_.data(), 0,
              LineSolver::lines(f, axis, n) * kForwardCarry * kDoubleBytes);
      bsp_sync();
    } else {
      solver_.forward(f, axis, carry_in, nullptr, s > 0 ? backward_send_.data() : nullptr);
      if (s > 0) {
        bsp_put(mp_.predecessor(axis), backward_send_.data(), backward_receive_.data(), 0,
                LineSolver::lines(f, axis, n) * kBackwardCarry * kDoubleBytes);
        bsp_sync();
      }
    }
  }
  // Back substitution of the other cells, position q-2 .. 0.
  for (int s = q - 2; s >= 0; --s) {
    CellFields& f = cells_[mp_.cell_at(axis, s)];
    solver_.backward(f, axis, backward_receive_.data(), s > 0 ? backward_send_.data() : nullptr);
    if (s > 0) {
      bsp_put(mp_.predecessor(axis), backward_send_.data(), backward_receive_.data(), 0,
              LineSolver::lines(f, axis, n) * kBackwardCarry * kDoubleBytes);
      bsp_sync();
    }
  }
}

}  // namespace nas::sp
