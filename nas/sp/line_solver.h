// nas/sp/line_solver.h: the scalar pentadiagonal solves of SP along one axis for the
// lines of one cell, a bundle of lines at a time (the lines of one plane, side by side as
// lanes, so the elimination of a row is one loop over all lanes). For y and z lines the
// lanes are neighbours in x, so the solve works on the cell's rhs arrays in place; x lines
// are gathered into a [row][lane] workspace and written back.
// The elimination rolls along the rows: each row's coefficients are formed when the row
// comes within reach (two rows ahead) and only the two pending rows are held per lane;
// what the back substitution needs (the normalised upper diagonals) is all that is kept.
//
// Each line carries three systems: the u eigenvalue (right-hand-side components 0..2),
// u+c (component 3) and u-c (component 4). A line crosses q cells; the cell's part is
// solved with the Thomas algorithm as NPB's multi-partition version does it:
//   forward:  the first two rows take the eliminated last two rows of the previous cell
//             (carry_in, 22 values per line) and the cell's own last two rows are handed
//             on (carry_out); unless the back substitution follows at once, the elimination
//             writes the upper diagonals straight into the bundle's slot of
//             CellFields::upper, where the backward stage reads them in place;
//   backward: the last two rows take the solution of the next cell's first two rows
//             (10 values per line) and the cell's first two rows are handed back.
// When the cell is the last along the line, forward and backward run in one pass. When a
// cell's lines are solved, the block-diagonal product of the axis is applied (ninvr after
// x, pinvr after y, tzetar and the update u += rhs after z). The arithmetic of every row
// is NPB's, so the results equal the serial solver's.
#pragma once

#include <vector>

#include "nas/sp/cell_fields.h"
#include "nas/sp/sp_constants.h"

namespace nas::sp {

constexpr int kForwardCarry = 22;   // doubles per line handed to the next cell
constexpr int kBackwardCarry = 10;  // doubles per line handed to the previous cell

class LineSolver {
 public:
  LineSolver(const SpConstants& k, int max_cell_size);

  // The number of lines of a cell along axis (what the carry buffers hold).
  static int lines(const CellFields& f, int axis, int n);
  // The size of CellFields::upper a cell needs when its lines cross several cells: one
  // slot per bundle, each the workspace's d and e of the three systems.
  static std::size_t kept_upper_doubles(int max_cell_size);

  // Forward elimination of every line of the cell along axis. carry_in: null for the
  // first cell of the lines. If the cell is the last (it ends at the grid boundary), the
  // back substitution and the block-diagonal product follow at once and back_out (unless
  // null: first cell too) receives the first two rows' solution; otherwise carry_out
  // receives the last two eliminated rows.
  void forward(CellFields& f, int axis, const double* carry_in, double* carry_out, double* back_out);
  // Back substitution of a cell that is not last: back_in holds the next cell's first two
  // rows' solution; back_out (null for the first cell) receives this cell's.
  void backward(CellFields& f, int axis, const double* back_in, double* back_out);

 private:
  struct Bundle;
  // Gathers the bundle's velocity, rhon and speed (rows -1..rows), its rhs, and the
  // per-row dissipation terms.
  void gather(CellFields& f, int axis, const Bundle& b);
  // The unmodified coefficients of row r for every lane, into ring slot r % 3.
  void fresh_row(int r, int lanes);
  // Forward elimination of the three systems, rolling along the rows: only the three rows
  // in reach are held (per lane, in the ring), the normalised upper diagonals go to d_, e_.
  void eliminate(int rows, int lanes, const double* carry_in);
  void substitute(int rows, int lanes, const double* back_in);
  void finish(CellFields& f, int axis, const Bundle& b, double* back_out);
  // Points the rhs rows at the cell's rhs arrays themselves when the lanes are contiguous
  // (y and z lines), else at the workspace, filled from the cell when load is set.
  void bind_rhs(CellFields& f, const Bundle& b, bool load);
  // Points d_ and e_ at the bundle's slot of the cell's upper store (kept: the lines go
  // on into another cell) or at the workspace.
  void bind_upper(CellFields& f, const Bundle& b, bool kept);
  // Writes the workspace rows back to the cell (nothing to do when bound in place).
  void store_rhs(CellFields& f, const Bundle& b);
  double* rhs_row(int m, int r) const { return rhs_base_[m] + r * rhs_stride_; }

  const SpConstants& k_;
  int max_rows_, max_lanes_;
  double dtt1_ = 0, dtt2_ = 0, c2dtt1_ = 0;  // of the axis being solved
  // Workspace, [row][lane]: rows -1 and `rows` exist for cv, rhon, speed.
  std::vector<double> cv_, rhon_, speed_;
  std::vector<double> r_[5];       // right-hand sides of x lines (gathered)
  double* rhs_base_[5] = {};       // row 0 of each rhs component of the current bundle
  std::ptrdiff_t rhs_stride_ = 0;  // between its rows
  bool rhs_in_place_ = false;
  // Normalised upper diagonals of the three systems, [row][lane] like the workspace.
  std::size_t upper_plane_ = 0;     // doubles of one such array (and of every workspace array)
  std::vector<double> upper_work_;  // 6 arrays: d and e of the three systems
  double* d_[3] = {};
  double* e_[3] = {};
  // Additive dissipation terms of each row and whether it is a grid-boundary row.
  std::vector<double> da_, db_, dc_, dd_, de_;
  std::vector<char> identity_;
  // The coefficients of the three rows in reach, row r in slot r % 3, one value per lane:
  // a and e (the same for the three systems and never modified), b, c, d per system.
  std::vector<double> ring_a_[3], ring_e_[3];
  std::vector<double> ring_b_[3][3], ring_c_[3][3], ring_d_[3][3];  // [system][slot]
};

}  // namespace nas::sp
