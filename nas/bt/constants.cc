// nas/bt/constants.cc: NPB BT's constants (the gas constants, grid spacings and the
// products of them the solver uses).
#include "nas/bt/constants.h"

#include <algorithm>

namespace nas::bt {

Constants make_constants(int n, double dt) {
  Constants k;
  k.n = n;
  k.dt = dt;
  k.c1 = kGasC1;
  k.c2 = kGasC2;
  k.c3 = kGasC3;
  k.c4 = kGasC4;
  k.c5 = kGasC5;
  k.c1c2 = k.c1 * k.c2;
  k.c1c5 = k.c1 * k.c5;
  k.c3c4 = k.c3 * k.c4;
  k.c1345 = k.c1c5 * k.c3c4;
  k.conz1 = 1.0 - k.c1c5;
  k.con43 = 4.0 / 3.0;
  k.con16 = 1.0 / 6.0;
  const double dcoef[3] = {0.75, 0.75, 1.0};  // dx*, dy*, dz*
  for (int a = 0; a < 3; ++a) {
    k.dnm1[a] = 1.0 / double(n - 1);
    k.t1[a] = 1.0 / (k.dnm1[a] * k.dnm1[a]);
    k.t2[a] = 1.0 / (2.0 * k.dnm1[a]);
    k.t3[a] = 1.0 / k.dnm1[a];
    for (int m = 0; m < 5; ++m) {
      k.d[a][m] = dcoef[a];
      k.dtd1[a][m] = k.d[a][m] * k.t1[a];
    }
    const double c3c4t3 = k.c3c4 * k.t3[a];
    k.con[a][0] = c3c4t3 * k.con43 * k.t3[a];
    k.con[a][1] = c3c4t3 * k.t3[a];
    k.con[a][2] = c3c4t3 * k.conz1 * k.t3[a];
    k.con[a][3] = c3c4t3 * k.con16 * k.t3[a];
    k.con[a][4] = c3c4t3 * k.c1c5 * k.t3[a];
  }
  k.dssp = 0.25 * std::max(k.d[0][0], std::max(k.d[1][0], k.d[2][0]));
  return k;
}

}  // namespace nas::bt
