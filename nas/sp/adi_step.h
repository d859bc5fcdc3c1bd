// nas/sp/adi_step.h: one SP time step on this process's cells, as a short sequence of
// supersteps:
//   1 superstep   copy_faces (face_exchange.h), then compute_rhs + txinvr on every cell;
//   per axis x, y, z, the multi-partition sweep: in stage s every process eliminates its
//   cell at position s along the axis and puts the last two rows of all its lines to the
//   axis successor (q-1 supersteps); the last stage back-substitutes at once and the
//   back substitution runs the stages in reverse, putting the first two rows' solution to
//   the predecessor (q-1 supersteps); each cell gets ninvr / pinvr / tzetar + add as soon
//   as its lines are solved.
// So with p = q*q processes a step takes 1 + 6(q-1) supersteps, each with every process
// working on one cell and sending one message to one neighbour.
#pragma once

#include <vector>

#include "nas/sp/cell_fields.h"
#include "nas/sp/face_exchange.h"
#include "nas/sp/line_solver.h"
#include "nas/sp/multipartition.h"
#include "nas/sp/sp_constants.h"

namespace nas::sp {

class AdiStep {
 public:
  // Collective (registers the communication buffers).
  AdiStep(const SpConstants& k, const Multipartition& mp, std::vector<CellFields>& cells);
  ~AdiStep();
  AdiStep(const AdiStep&) = delete;
  AdiStep& operator=(const AdiStep&) = delete;

  // Collective: one time step, u <- u + the ADI update.
  void step();
  // Collective: ghosts and rhs of the current u without txinvr (for the residual norm).
  void residual();

 private:
  void sweep(int axis);

  const SpConstants& k_;
  const Multipartition& mp_;
  std::vector<CellFields>& cells_;
  LineSolver solver_;
  FaceExchange faces_;
  std::vector<double> forward_send_, forward_receive_, backward_send_, backward_receive_;
};

}  // namespace nas::sp
