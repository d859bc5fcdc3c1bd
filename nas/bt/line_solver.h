// nas/bt/line_solver.h: the block-tridiagonal solve along one grid line's segment inside
// a cell, for one direction (NPB's x_solve / y_solve / z_solve restricted to a cell):
// the flux (f) and viscous (n) Jacobians of the segment's points and their neighbours,
// the blocks A, B, C of each point, forward elimination (Thomas algorithm, B^-1 C and
// B^-1 r kept in place) and back substitution.
//
// The segment continues the elimination of the previous cell on the line (its last C'
// and r', "carry in") and hands its own last C' and r' on ("carry out"); the back
// substitution takes the next cell's first solution value and hands on its own first.
// Global boundary points have A = C = 0, B = I (NPB's lhsinit) and are left unchanged.
#pragma once

#include <vector>

#include "nas/bt/cell.h"
#include "nas/bt/constants.h"

namespace nas::bt {

// Doubles a line carries to the next cell in forward elimination (C' and r') and in
// back substitution (the solution at the cell's first point).
constexpr int kForwardCarry = 30;
constexpr int kBackwardCarry = 5;

template <int A>
class LineSolver {
 public:
  LineSolver(const Constants& k, int max_points);

  // Forward elimination on the line of the cell through local coordinates (l1, l2) of
  // the two other axes (in increasing axis order). cstore: 25 doubles per point of the
  // segment, receives C'. carry_in: the previous cell's C' and r' (nullptr on the first
  // cell); carry_out: where to put this segment's last C' and r' (nullptr on the last).
  void forward(Cell& cell, int l1, int l2, double* cstore, const double* carry_in, double* carry_out);

  // Back substitution on the same line. next: the solution at the next cell's first
  // point (nullptr on the last cell); first_out: where to put the solution at this
  // segment's first point (nullptr on the first cell).
  void backward(Cell& cell, int l1, int l2, const double* cstore, const double* next, double* first_out);

 private:
  void jacobians(const double* u, double qs, double square, double rho_inv, double* fj, double* nj) const;

  const Constants& k_;
  std::vector<double> fj_, nj_;  // 25 per point, points -1 .. size of the segment
};

}  // namespace nas::bt
