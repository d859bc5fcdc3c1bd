// nas/mg/stencils.h: the local computations of the MG V-cycle on one process's block
// (NPB MG specification, NAS report 95-020): residual, smoother, restriction,
// prolongation and the local parts of the norms. None of them communicates; each one
// that leaves its output's ghost layer stale says so, and the caller exchanges it.
// Operation order within each point follows the NPB reference so results agree to the
// last bits where the verification needs it.
#pragma once

#include <vector>

#include "nas/mg/grid3.h"

namespace nas::mg {

// Per-line temporaries shared by the stencils (sized once for the finest level).
struct LineScratch {
  std::vector<double> a, b, c;
  explicit LineScratch(int longest_line) : a(longest_line + 2), b(longest_line + 2), c(longest_line + 2) {}
};

// r = v - A u on the interior (r may be the same grid as v). Ghosts of r left stale.
void residual(const Grid3& u, const Grid3& v, const Grid3& r, const double a[4], LineScratch& scratch);

// u = u + C r on the interior (the smoother). Ghosts of u left stale.
void smooth(const Grid3& r, const Grid3& u, const double c[4], LineScratch& scratch);

// s = P r: trilinear restriction of fine r (ghosts valid) onto the coarse s, whose block
// is the coarse image of r's block. Ghosts of s left stale.
void restrict_to_coarse(const Grid3& r, const Grid3& s, LineScratch& scratch);

// u = u + Q z: trilinear prolongation of coarse z (ghosts valid) added into fine u,
// including u's ghost layer, which therefore stays consistent.
void prolongate_add(const Grid3& z, const Grid3& u, LineScratch& scratch);

// Sum of squares and largest magnitude over the interior.
struct LocalNorms {
  double sum_of_squares = 0;
  double max_abs = 0;
};
LocalNorms local_norms(const Grid3& r);

// Every point, ghosts included, set to zero.
void zero(const Grid3& g);

}  // namespace nas::mg
