// nas/sp/sp_constants.h: the SP problem definition: the class table (grid size, time steps,
// dt, official verification norms) and the flow and discretisation constants NPB derives
// from dt and the grid (set_constants). The exact solution used for the initial state, the
// forcing term and the error norm is NPB's, shared with BT and LU
// (nas/common/npb_exact_solution.h).
#pragma once

#include <array>

#include "nas/common/npb_exact_solution.h"
#include "nas/common/problem_class.h"

namespace nas::sp {

struct SpClass {
  int n;           // grid points per direction
  int iterations;  // time steps
  double dt;
  std::array<double, 5> xcr;  // RMS norms of the residual (official)
  std::array<double, 5> xce;  // RMS norms of the solution error (official)
};

// Classes S, W, A, B, C with the NPB 3.x reference values.
const nas::ClassTable<SpClass>& sp_classes();

// Every constant of NPB SP's set_constants, for one grid size and time step.
struct SpConstants {
  int n = 0;  // grid points per direction (the same in x, y, z)
  double dt = 0;
  double c1, c2, c3, c4, c5, bt, c1c2, c1c5, c3c4, c1345, conz1;
  double dnxm1, dnym1, dnzm1;
  double tx1, tx2, tx3, ty1, ty2, ty3, tz1, tz2, tz3;
  double dx1, dx2, dx3, dx4, dx5, dy1, dy2, dy3, dy4, dy5, dz1, dz2, dz3, dz4, dz5;
  double dxmax, dymax, dzmax, dssp, c4dssp, c5dssp;
  double dttx1, dttx2, dtty1, dtty2, dttz1, dttz2, c2dttx1, c2dtty1, c2dttz1;
  double dtdssp, comz1, comz4, comz5, comz6;
  double c3c4tx3, c3c4ty3, c3c4tz3;
  double dx1tx1, dx2tx1, dx3tx1, dx4tx1, dx5tx1;
  double dy1ty1, dy2ty1, dy3ty1, dy4ty1, dy5ty1;
  double dz1tz1, dz2tz1, dz3tz1, dz4tz1, dz5tz1;
  double c2iv, con43, con16;
  double xxcon1, xxcon2, xxcon3, xxcon4, xxcon5;
  double yycon1, yycon2, yycon3, yycon4, yycon5;
  double zzcon1, zzcon2, zzcon3, zzcon4, zzcon5;
};

SpConstants make_constants(int n, double dt);

}  // namespace nas::sp
