// nas/bt/constants.h: BT's problem parameters per class and the physical and numerical
// constants NPB derives from them (set_constants). The exact solution the forcing term,
// the initial field and the error norm are built from is NPB's, shared with LU and SP
// (nas/common/npb_exact_solution.h).
#pragma once

#include "nas/common/npb_exact_solution.h"

namespace nas::bt {

// One class of the benchmark: grid points per direction, time steps, time step, and the
// official reference norms (residual xcr and solution error xce after the last step).
struct BtClass {
  int n;
  int iterations;
  double dt;
  double xcr[5];
  double xce[5];
};

// The constants of NPB's set_constants for an n^3 grid and time step dt. Arrays indexed
// by direction (0 = xi, 1 = eta, 2 = zeta) replace NPB's tx1/ty1/tz1 families.
struct Constants {
  int n = 0;
  double dt = 0;
  double c1 = 0, c2 = 0, c3 = 0, c4 = 0, c5 = 0;
  double c1c2 = 0, c1c5 = 0, c3c4 = 0, c1345 = 0, conz1 = 0, con43 = 0, con16 = 0;
  double dnm1[3] = {};     // dnxm1, dnym1, dnzm1
  double t1[3] = {};       // tx1, ty1, tz1
  double t2[3] = {};       // tx2, ty2, tz2
  double t3[3] = {};       // tx3, ty3, tz3
  double d[3][5] = {};     // dx1..dx5, dy1..dy5, dz1..dz5
  double dtd1[3][5] = {};  // dx1tx1..dx5tx1, dy1ty1.., dz1tz1..
  double con[3][5] = {};   // xxcon1..5, yycon1..5, zzcon1..5
  double dssp = 0;
};

Constants make_constants(int n, double dt);

}  // namespace nas::bt
