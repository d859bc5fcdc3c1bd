// nas/lu/lu_classes.h: the NPB LU problem classes as data: grid size, SSOR iterations,
// pseudo-time step and the official verification values (RMS norms of the final
// residual, RMS norms of the solution error, and the surface integral), from NPB 3.x.
#pragma once

#include "nas/common/problem_class.h"

namespace nas::lu {

struct LuClass {
  int n;           // grid points per direction (nx0 = ny0 = nz0)
  int iterations;  // itmax
  double dt;       // pseudo-time step
  double xcr[5];   // reference RMS norms of the residual
  double xce[5];   // reference RMS norms of the solution error
  double xci;      // reference surface integral
};

inline const nas::ClassTable<LuClass> kLuClasses = {
    {'S',
     {12,
      50,
      0.5,
      {1.6196343210976702e-02, 2.1976745164821318e-03, 1.5179927653399185e-03, 1.5029584435994323e-03,
       3.4264073155896461e-02},
      {6.4223319957960924e-04, 8.4144342047347926e-05, 5.8588269616485186e-05, 5.8474222595157350e-05,
       1.3103347914111294e-03},
      7.8418928865937083e+00}},
    {'W',
     {33,
      300,
      1.5e-3,
      {0.1236511638192e+02, 0.1317228477799e+01, 0.2550120713095e+01, 0.2326187750252e+01, 0.2826799444189e+02},
      {0.4867877144216e+00, 0.5064652880982e-01, 0.9281818101960e-01, 0.8570126542733e-01, 0.1084277417792e+01},
      0.1161399311023e+02}},
    {'A',
     {64,
      250,
      2.0,
      {7.7902107606689367e+02, 6.3402765259692870e+01, 1.9499249727292479e+02, 1.7845301160418537e+02,
       1.8384760349464247e+03},
      {2.9964085685471943e+01, 2.8194576365003349e+00, 7.3473412698774742e+00, 6.7139225687777051e+00,
       7.0715315688392578e+01},
      2.6030925604886277e+01}},
    {'B',
     {102,
      250,
      2.0,
      {3.5532672969982736e+03, 2.6214750795310692e+02, 8.8333721850952190e+02, 7.7812774739425265e+02,
       7.3087969592545314e+03},
      {1.1401176380212709e+02, 8.1098963655421574e+00, 2.8480597317698308e+01, 2.5905394567832939e+01,
       2.6054907504857413e+02},
      4.7887162703308227e+01}},
};

// NPB's operation count for LU (the Mop/s numerator): per iteration a cubic polynomial
// fitted to the flop count of one SSOR iteration on an n^3 grid.
inline double lu_operation_count(int n, int iterations) {
  const double n3 = double(n) * n * n, mean = double(3 * n) / 3.0;
  return double(iterations) * (1984.77 * n3 - 10923.3 * mean * mean + 27770.9 * mean - 144010.0);
}

}  // namespace nas::lu
