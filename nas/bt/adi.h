// nas/bt/adi.h: one BT time step on this process's cells, as a sequence of BSP
// supersteps: copy_faces (ghost layers of u to the six neighbour cells, one superstep of
// puts), compute_rhs on every cell, then the x, y and z block-tridiagonal line sweeps,
// each a pipeline over the q cells of a line: q forward-elimination stages, the last one
// fused with its back substitution, then q-1 back-substitution stages; every stage ends
// with one superstep in which each process puts its boundary data (C' and r', or the
// solution's first plane) to the one neighbour that owns the next cell. Finally u += rhs.
// With q*q processes that is 1 + 3 * 2(q - 1) supersteps per time step.
#pragma once

#include <vector>

#include "nas/bt/cell.h"
#include "nas/bt/constants.h"
#include "nas/bt/line_solver.h"
#include "nas/bt/multi_partition.h"

namespace nas::bt {

class Adi {
 public:
  // Collective: registers the two receive areas (one bsp_sync).
  Adi(const MultiPartition& mp, std::vector<Cell>& cells, const Constants& k);
  ~Adi();
  Adi(const Adi&) = delete;
  Adi& operator=(const Adi&) = delete;

  // Collective: exchange ghost layers, then compute_rhs on every cell.
  void copy_faces_and_rhs();
  // Collective: one full time step (copy_faces_and_rhs, the three sweeps, add).
  void step();

 private:
  void copy_faces();
  template <int A>
  void sweep(LineSolver<A>& solver);
  void add();

  const MultiPartition& mp_;
  std::vector<Cell>& cells_;
  const Constants& k_;
  int face_slot_ = 0;  // doubles per (cell, side) slot of the ghost exchange
  std::vector<double> face_send_, face_recv_;
  std::vector<double> solve_send_, solve_recv_;
  std::vector<double> line_store_;  // C' of one line, for the fused last stage
  LineSolver<0> x_;
  LineSolver<1> y_;
  LineSolver<2> z_;
};

}  // namespace nas::bt
