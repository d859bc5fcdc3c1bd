// nas/sp/line_solver.cc: bundle-wise pentadiagonal solves along one axis (see
// line_solver.h). Workspace arrays are [row][lane]; the inner loops run over lanes.
#include "nas/sp/line_solver.h"

#include <algorithm>
#include <cassert>

#include "nas/sp/block_diagonal.h"
#include "nas/common/vector_clones.h"

namespace nas::sp {

struct LineSolver::Bundle {
  std::size_t base;                        // point index of row 0, lane 0
  std::ptrdiff_t lane_stride, row_stride;  // in points
  int lanes, rows;
  int first_line;  // index of lane 0's line among the cell's lines
  int index;       // of the bundle among the cell's bundles along the axis
};

namespace {

// Doubles of one [row][lane] workspace array: rows -1 .. max, lanes 0 .. max - 1.
std::size_t plane_doubles(int max_cell_size) { return std::size_t(max_cell_size + 2) * max_cell_size; }

struct AxisCoefficients {
  const std::vector<double>* velocity;
  double dtt1, dtt2, c2dtt1;
  double d_first, d5, dmax, d1;  // rhon = max(d_first + con43 ru1, d5 + c1c5 ru1, dmax + ru1, d1)
};

AxisCoefficients axis_coefficients(const SpConstants& k, const CellFields& f, int axis) {
  if (axis == 0) return {&f.us, k.dttx1, k.dttx2, k.c2dttx1, k.dx2, k.dx5, k.dxmax, k.dx1};
  if (axis == 1) return {&f.vs, k.dtty1, k.dtty2, k.c2dtty1, k.dy3, k.dy5, k.dymax, k.dy1};
  return {&f.ws, k.dttz1, k.dttz2, k.c2dttz1, k.dz4, k.dz5, k.dzmax, k.dz1};
}

// The bundles of a cell along an axis: their planes and lanes are the grid-interior
// points of the two other axes.
template <typename F>
void for_each_bundle(const CellFields& f, int axis, int n, F&& visit) {
  const Cell& c = f.cell;
  const LocalRange rx = interior_range(c, 0, n), ry = interior_range(c, 1, n), rz = interior_range(c, 2, n);
  const std::ptrdiff_t sy = f.ni, sz = std::ptrdiff_t(f.ni) * f.nj;
  int line = 0, index = 0;
  if (axis == 0) {
    const int lanes = ry.hi - ry.lo + 1;
    for (int k = rz.lo; k <= rz.hi; ++k, line += lanes)
      visit({f.at(0, ry.lo, k), sy, 1, lanes, c.size[0], line, index++});
  } else if (axis == 1) {
    const int lanes = rx.hi - rx.lo + 1;
    for (int k = rz.lo; k <= rz.hi; ++k, line += lanes)
      visit({f.at(rx.lo, 0, k), 1, sy, lanes, c.size[1], line, index++});
  } else {
    const int lanes = rx.hi - rx.lo + 1;
    for (int j = ry.lo; j <= ry.hi; ++j, line += lanes)
      visit({f.at(rx.lo, j, 0), 1, sz, lanes, c.size[2], line, index++});
  }
}

}  // namespace

LineSolver::LineSolver(const SpConstants& k, int max_cell_size)
    : k_(k), max_rows_(max_cell_size), max_lanes_(max_cell_size) {
  upper_plane_ = plane_doubles(max_cell_size);
  for (auto* v : {&cv_, &rhon_, &speed_}) v->assign(upper_plane_, 0.0);
  for (auto& v : r_) v.assign(upper_plane_, 0.0);
  upper_work_.assign(6 * upper_plane_, 0.0);
  for (auto* v : {&da_, &db_, &dc_, &dd_, &de_}) v->assign(max_rows_, 0.0);
  identity_.assign(max_rows_, 0);
  for (int k = 0; k < 3; ++k) {
    ring_a_[k].assign(max_lanes_, 0.0);
    ring_e_[k].assign(max_lanes_, 0.0);
    for (int s = 0; s < 3; ++s)
      for (auto* v : {&ring_b_[s][k], &ring_c_[s][k], &ring_d_[s][k]}) v->assign(max_lanes_, 0.0);
  }
}

std::size_t LineSolver::kept_upper_doubles(int max_cell_size) {
  // Bundles per axis are at most the cell's extent along a third axis.
  return 6 * plane_doubles(max_cell_size) * max_cell_size;
}

void LineSolver::bind_upper(CellFields& f, const Bundle& b, bool kept) {
  assert(!kept || (std::size_t(b.index) + 1) * 6 * upper_plane_ <= f.upper.size());
  double* base = kept ? f.upper.data() + std::size_t(b.index) * 6 * upper_plane_ : upper_work_.data();
  for (int s = 0; s < 3; ++s) d_[s] = base + 2 * s * upper_plane_, e_[s] = d_[s] + upper_plane_;
}

int LineSolver::lines(const CellFields& f, int axis, int n) {
  int count = 0;
  for_each_bundle(f, axis, n, [&count](const Bundle& b) { count += b.lanes; });
  return count;
}

NAS_CLONES_AVX2 void LineSolver::gather(CellFields& f, int axis, const Bundle& b) {
  const SpConstants& k = k_;
  const int n = k.n, low = f.cell.low[axis], W = max_lanes_;
  const AxisCoefficients ax = axis_coefficients(k, f, axis);
  dtt1_ = ax.dtt1, dtt2_ = ax.dtt2, c2dtt1_ = ax.c2dtt1;
  const double* vel = ax.velocity->data();
  const double* rho_i = f.rho_i.data();
  const double* speed = f.speed.data();
  auto row = [W](std::vector<double>& v, int r) { return v.data() + std::size_t(r + 1) * W; };

  for (int r = -1; r <= b.rows; ++r) {
    double* __restrict cv = row(cv_, r);
    double* __restrict rhon = row(rhon_, r);
    double* __restrict spd = row(speed_, r);
    const std::size_t p0 = b.base + r * b.row_stride;
    for (int l = 0; l < b.lanes; ++l) {
      const std::size_t p = p0 + l * b.lane_stride;
      const double ru1 = k.c3c4 * rho_i[p];
      cv[l] = vel[p];
      rhon[l] = std::max(ax.d_first + k.con43 * ru1, std::max(ax.d5 + k.c1c5 * ru1, std::max(ax.dmax + ru1, ax.d1)));
      spd[l] = speed[p];
    }
  }
  for (int r = 0; r < b.rows; ++r) {
    const int g = low + r;
    identity_[r] = (g == 0 || g == n - 1);
    double wa = k.comz1, wb = -k.comz4, wc = k.comz6, wd = -k.comz4, we = k.comz1;
    if (g == 1) wa = 0.0, wb = 0.0, wc = k.comz5;
    else if (g == 2) wa = 0.0;
    else if (g == n - 3) we = 0.0;
    else if (g == n - 2) wc = k.comz5, wd = 0.0, we = 0.0;
    da_[r] = wa, db_[r] = wb, dc_[r] = wc, dd_[r] = wd, de_[r] = we;
  }
  bind_rhs(f, b, /*load=*/true);
}

NAS_CLONES_AVX2 void LineSolver::bind_rhs(CellFields& f, const Bundle& b, bool load) {
  rhs_in_place_ = b.lane_stride == 1;
  if (rhs_in_place_) {
    for (int m = 0; m < 5; ++m) rhs_base_[m] = f.rhs_of(m) + b.base;
    rhs_stride_ = b.row_stride;
    return;
  }
  for (int m = 0; m < 5; ++m) rhs_base_[m] = r_[m].data() + max_lanes_;
  rhs_stride_ = max_lanes_;
  if (!load) return;
  for (int m = 0; m < 5; ++m) {
    const double* src = f.rhs_of(m) + b.base;
    for (int r = 0; r < b.rows; ++r) {
      double* __restrict R = rhs_row(m, r);
      for (int l = 0; l < b.lanes; ++l) R[l] = src[r * b.row_stride + l * b.lane_stride];
    }
  }
}

void LineSolver::store_rhs(CellFields& f, const Bundle& b) {
  if (rhs_in_place_) return;
  for (int m = 0; m < 5; ++m) {
    double* dst = f.rhs_of(m) + b.base;
    for (int r = 0; r < b.rows; ++r) {
      const double* __restrict R = rhs_row(m, r);
      for (int l = 0; l < b.lanes; ++l) dst[r * b.row_stride + l * b.lane_stride] = R[l];
    }
  }
}

NAS_CLONES_AVX2 void LineSolver::fresh_row(int r, int lanes) {
  const int W = max_lanes_;
  auto row = [W](std::vector<double>& v, int r) { return v.data() + std::size_t(r + 1) * W; };
  const int k = r % 3;
  double* __restrict a = ring_a_[k].data();
  double* __restrict e = ring_e_[k].data();
  double* __restrict b0 = ring_b_[0][k].data();
  double* __restrict b1 = ring_b_[1][k].data();
  double* __restrict b2 = ring_b_[2][k].data();
  double* __restrict c0 = ring_c_[0][k].data();
  double* __restrict c1 = ring_c_[1][k].data();
  double* __restrict c2 = ring_c_[2][k].data();
  double* __restrict d0 = ring_d_[0][k].data();
  double* __restrict d1 = ring_d_[1][k].data();
  double* __restrict d2 = ring_d_[2][k].data();
  if (identity_[r]) {
    for (int l = 0; l < lanes; ++l) {
      a[l] = e[l] = 0.0;
      b0[l] = b1[l] = b2[l] = d0[l] = d1[l] = d2[l] = 0.0;
      c0[l] = c1[l] = c2[l] = 1.0;
    }
    return;
  }
  const double* __restrict cvm = row(cv_, r - 1);
  const double* __restrict cvp = row(cv_, r + 1);
  const double* __restrict rhm = row(rhon_, r - 1);
  const double* __restrict rh0 = row(rhon_, r);
  const double* __restrict rhp = row(rhon_, r + 1);
  const double* __restrict spm = row(speed_, r - 1);
  const double* __restrict spp = row(speed_, r + 1);
  const double wa = da_[r], wb = db_[r], wc = dc_[r], wd = dd_[r], we = de_[r];
  const double dtt1 = dtt1_, dtt2 = dtt2_, c2dtt1 = c2dtt1_;
  const double aa = 0.0 + wa, ee = 0.0 + we;
  for (int l = 0; l < lanes; ++l) {
    double bb = -dtt2 * cvm[l] - dtt1 * rhm[l];
    double cc = 1.0 + c2dtt1 * rh0[l];
    double dd = dtt2 * cvp[l] - dtt1 * rhp[l];
    bb = bb + wb;
    cc = cc + wc;
    dd = dd + wd;
    a[l] = aa;
    e[l] = ee;
    b0[l] = bb, c0[l] = cc, d0[l] = dd;
    b1[l] = bb - dtt2 * spm[l], c1[l] = cc, d1[l] = dd + dtt2 * spp[l];
    b2[l] = bb + dtt2 * spm[l], c2[l] = cc, d2[l] = dd - dtt2 * spp[l];
  }
}

namespace {

// The rhs components of each system, and where its rows sit in a forward carry.
constexpr int kFirst[3] = {0, 3, 4}, kCount[3] = {3, 1, 1}, kCarryOffset[3] = {0, 10, 16};

// The three rows in reach of one system, per lane: row r (being normalised), row r+1 and
// row r+2 (from which it is eliminated).
struct RingRows {
  double *c0, *d0;
  const double* e0;
  double *b1, *c1, *d1;
  const double* e1;
  const double* a2;
  double *b2, *c2;
};
// Where one step writes: the normalised d, e of rows r and r+1, and the rhs rows r..r+2.
struct StepOutput {
  double *d0, *e0, *d1, *e1;
  double* R0[3];
  double* R1[3];
  double* R2[3];
};

// One elimination step of one system on every lane: row r is normalised and eliminated
// from rows r+1 and r+2 (updated in place in the ring). If kLast, row r+1 is the final
// row: it is normalised instead and there is no row r+2.
template <int M, bool kLast>
[[gnu::always_inline]] inline void step(const RingRows& rr, const StepOutput& out, int lanes) {
  double* __restrict c0 = rr.c0;
  double* __restrict d0 = rr.d0;
  const double* __restrict e0 = rr.e0;
  double* __restrict b1 = rr.b1;
  double* __restrict c1 = rr.c1;
  double* __restrict d1 = rr.d1;
  const double* __restrict e1 = rr.e1;
  const double* __restrict a2 = rr.a2;
  double* __restrict b2 = rr.b2;
  double* __restrict c2 = rr.c2;
  double* __restrict D0 = out.d0;
  double* __restrict E0 = out.e0;
  double* __restrict D1 = out.d1;
  double* __restrict E1 = out.e1;
  double* __restrict r0[M];
  double* __restrict r1[M];
  double* __restrict r2[M];
  for (int m = 0; m < M; ++m) r0[m] = out.R0[m], r1[m] = out.R1[m], r2[m] = out.R2[m];
  for (int l = 0; l < lanes; ++l) {
    const double fac1 = 1.0 / c0[l];
    const double d = fac1 * d0[l];
    const double e = fac1 * e0[l];
    D0[l] = d;
    E0[l] = e;
    for (int m = 0; m < M; ++m) r0[m][l] = fac1 * r0[m][l];
    const double b = b1[l];
    const double c = c1[l] - b * d;
    const double dn = d1[l] - b * e;
    for (int m = 0; m < M; ++m) r1[m][l] = r1[m][l] - b * r0[m][l];
    if (kLast) {
      const double fac2 = 1.0 / c;
      D1[l] = fac2 * dn;
      E1[l] = fac2 * e1[l];
      for (int m = 0; m < M; ++m) r1[m][l] = fac2 * r1[m][l];
    } else {
      c1[l] = c;
      d1[l] = dn;
      const double a = a2[l];
      b2[l] = b2[l] - a * d;
      c2[l] = c2[l] - a * e;
      for (int m = 0; m < M; ++m) r2[m][l] = r2[m][l] - a * r0[m][l];
    }
  }
  (void)d0;
}

}  // namespace

NAS_CLONES_AVX2 void LineSolver::eliminate(int L, int lanes, const double* carry_in) {
  fresh_row(0, lanes);
  fresh_row(1, lanes);
  // The previous cell's last two eliminated rows (P: hi-1, Q: hi) act on rows 0 and 1.
  if (carry_in) {
    const double* a0 = ring_a_[0].data();
    const double* a1 = ring_a_[1].data();
    for (int s = 0; s < 3; ++s) {
      const int width = 2 + kCount[s];
      double* b0 = ring_b_[s][0].data();
      double* c0 = ring_c_[s][0].data();
      double* d0 = ring_d_[s][0].data();
      double* b1 = ring_b_[s][1].data();
      double* c1 = ring_c_[s][1].data();
      for (int l = 0; l < lanes; ++l) {
        const double* P = carry_in + std::size_t(l) * kForwardCarry + kCarryOffset[s];
        const double* Q = P + width;
        const double a = a0[l];
        b0[l] = b0[l] - P[0] * a;
        c0[l] = c0[l] - P[1] * a;
        for (int m = 0; m < kCount[s]; ++m) {
          double& R = rhs_row(kFirst[s] + m, 0)[l];
          R = R - P[2 + m] * a;
        }
        const double r1 = b0[l];
        c0[l] = c0[l] - Q[0] * r1;
        d0[l] = d0[l] - Q[1] * r1;
        for (int m = 0; m < kCount[s]; ++m) {
          double& R = rhs_row(kFirst[s] + m, 0)[l];
          R = R - Q[2 + m] * r1;
        }
        const double r2 = a1[l];
        b1[l] = b1[l] - Q[0] * r2;
        c1[l] = c1[l] - Q[1] * r2;
        for (int m = 0; m < kCount[s]; ++m) {
          double& R = rhs_row(kFirst[s] + m, 1)[l];
          R = R - Q[2 + m] * r2;
        }
      }
    }
  }

  const int W = max_lanes_;
  auto row = [W](double* v, int r) { return v + std::size_t(r + 1) * W; };
  // Rows 0 .. L-3 eliminate two rows ahead; row L-2 finishes the line with row L-1.
  for (int r = 0; r + 2 <= L; ++r) {
    const bool last = r + 2 == L;
    if (!last) fresh_row(r + 2, lanes);  // into the slot row r-1 has left
    const int k0 = r % 3, k1 = (r + 1) % 3, k2 = (r + 2) % 3;
    for (int s = 0; s < 3; ++s) {
      const RingRows rr{ring_c_[s][k0].data(), ring_d_[s][k0].data(), ring_e_[k0].data(), ring_b_[s][k1].data(),
                        ring_c_[s][k1].data(), ring_d_[s][k1].data(), ring_e_[k1].data(), ring_a_[k2].data(),
                        ring_b_[s][k2].data(), ring_c_[s][k2].data()};
      StepOutput out{row(d_[s], r), row(e_[s], r), row(d_[s], r + 1), row(e_[s], r + 1), {}, {}, {}};
      for (int m = 0; m < kCount[s]; ++m) {
        out.R0[m] = rhs_row(kFirst[s] + m, r);
        out.R1[m] = rhs_row(kFirst[s] + m, r + 1);
        out.R2[m] = last ? nullptr : rhs_row(kFirst[s] + m, r + 2);
      }
      if (s == 0) last ? step<3, true>(rr, out, lanes) : step<3, false>(rr, out, lanes);
      else last ? step<1, true>(rr, out, lanes) : step<1, false>(rr, out, lanes);
    }
  }
}

namespace {

// Back substitution of one system; back_in (or null) holds the next cell's first two rows.
template <int M>
[[gnu::always_inline]] inline void substitute_system(const double* d, const double* e, double* const* R,
                                                     std::ptrdiff_t rs, int first, int L, int lanes, int W,
                                                     const double* back_in) {
  auto at = [W](const double* v, int r) { return v + std::size_t(r + 1) * W; };
  auto rrow = [rs](double* v, int r) { return v + r * rs; };
  if (!back_in) {
    const double* dl = at(d, L - 2);
    for (int m = 0; m < M; ++m) {
      double* r0 = rrow(R[m], L - 2);
      const double* r1 = rrow(R[m], L - 1);
      for (int l = 0; l < lanes; ++l) r0[l] = r0[l] - dl[l] * r1[l];
    }
  } else {
    for (int m = 0; m < M; ++m) {
      double* rl = rrow(R[m], L - 1);
      double* rk = rrow(R[m], L - 2);
      const double *dl = at(d, L - 1), *el = at(e, L - 1), *dk = at(d, L - 2), *ek = at(e, L - 2);
      for (int l = 0; l < lanes; ++l) {
        const double* in = back_in + std::size_t(l) * kBackwardCarry + 2 * (first + m);
        const double sm1 = in[0], sm2 = in[1];
        rl[l] = rl[l] - dl[l] * sm1 - el[l] * sm2;
        rk[l] = rk[l] - dk[l] * rl[l] - ek[l] * sm1;
      }
    }
  }
  for (int m = 0; m < M; ++m)
    for (int r = L - 3; r >= 0; --r) {
      double* __restrict r0 = rrow(R[m], r);
      const double* __restrict r1 = rrow(R[m], r + 1);
      const double* __restrict r2 = rrow(R[m], r + 2);
      const double* __restrict d0 = at(d, r);
      const double* __restrict e0 = at(e, r);
      for (int l = 0; l < lanes; ++l) r0[l] = r0[l] - d0[l] * r1[l] - e0[l] * r2[l];
    }
}

}  // namespace

NAS_CLONES_AVX2 void LineSolver::substitute(int rows, int lanes, const double* back_in) {
  double* R0[3] = {rhs_base_[0], rhs_base_[1], rhs_base_[2]};
  double* R3[1] = {rhs_base_[3]};
  double* R4[1] = {rhs_base_[4]};
  substitute_system<3>(d_[0], e_[0], R0, rhs_stride_, 0, rows, lanes, max_lanes_, back_in);
  substitute_system<1>(d_[1], e_[1], R3, rhs_stride_, 3, rows, lanes, max_lanes_, back_in);
  substitute_system<1>(d_[2], e_[2], R4, rhs_stride_, 4, rows, lanes, max_lanes_, back_in);
}

// Hands the first two rows back (if asked), applies the axis's block-diagonal product to
// the grid-interior rows and stores the solved rhs (after z also u += rhs).
NAS_CLONES_AVX2 void LineSolver::finish(CellFields& f, int axis, const Bundle& b, double* back_out) {
  const int n = k_.n, low = f.cell.low[axis];
  if (back_out)
    for (int l = 0; l < b.lanes; ++l)
      for (int m = 0; m < 5; ++m) {
        back_out[std::size_t(l) * kBackwardCarry + 2 * m] = rhs_row(m, 0)[l];
        back_out[std::size_t(l) * kBackwardCarry + 2 * m + 1] = rhs_row(m, 1)[l];
      }
  const double bt = k_.bt, c2iv = k_.c2iv;
  for (int r = 0; r < b.rows; ++r) {
    const int g = low + r;
    if (g < 1 || g > n - 2) continue;  // grid-boundary rows stay as they are (zero)
    double* R[5];
    for (int m = 0; m < 5; ++m) R[m] = rhs_row(m, r);
    const std::size_t p0 = b.base + r * b.row_stride;
    for (int l = 0; l < b.lanes; ++l) {
      double v[5] = {R[0][l], R[1][l], R[2][l], R[3][l], R[4][l]};
      if (axis == 0) {
        ninvr_point(v, bt);
      } else if (axis == 1) {
        pinvr_point(v, bt);
      } else {
        const std::size_t p = p0 + l * b.lane_stride;
        double* u = f.u.data() + p;  // component m at u[m * cstride]
        tzetar_point(v, f.us[p], f.vs[p], f.ws[p], f.speed[p], f.ainv[p], f.qs[p], u[0], bt, c2iv);
        for (int m = 0; m < 5; ++m) u[m * f.cstride] = u[m * f.cstride] + v[m];
      }
      for (int m = 0; m < 5; ++m) R[m][l] = v[m];
    }
  }
  store_rhs(f, b);
}

void LineSolver::forward(CellFields& f, int axis, const double* carry_in, double* carry_out, double* back_out) {
  const int n = k_.n;
  const bool last = f.cell.low[axis] + f.cell.size[axis] == n;
  const int W = max_lanes_;
  auto row = [W](const double* v, int r) { return v + std::size_t(r + 1) * W; };
  for_each_bundle(f, axis, n, [&](const Bundle& b) {
    bind_upper(f, b, /*kept=*/!last);
    gather(f, axis, b);
    eliminate(b.rows, b.lanes, carry_in ? carry_in + std::size_t(b.first_line) * kForwardCarry : nullptr);
    if (last) {
      substitute(b.rows, b.lanes, nullptr);
      finish(f, axis, b, back_out ? back_out + std::size_t(b.first_line) * kBackwardCarry : nullptr);
      return;
    }
    // Hand on the last two eliminated rows: per system d, e and its rhs components.
    for (int l = 0; l < b.lanes; ++l) {
      double* out = carry_out + std::size_t(b.first_line + l) * kForwardCarry;
      for (int s = 0; s < 3; ++s)
        for (int r = b.rows - 2; r < b.rows; ++r) {
          *out++ = row(d_[s], r)[l];
          *out++ = row(e_[s], r)[l];
          for (int m = 0; m < kCount[s]; ++m) *out++ = rhs_row(kFirst[s] + m, r)[l];
        }
    }
    store_rhs(f, b);
  });
}

void LineSolver::backward(CellFields& f, int axis, const double* back_in, double* back_out) {
  const int n = k_.n;
  for_each_bundle(f, axis, n, [&](const Bundle& b) {
    bind_upper(f, b, /*kept=*/true);
    bind_rhs(f, b, /*load=*/true);
    substitute(b.rows, b.lanes, back_in + std::size_t(b.first_line) * kBackwardCarry);
    finish(f, axis, b, back_out ? back_out + std::size_t(b.first_line) * kBackwardCarry : nullptr);
  });
}

}  // namespace nas::sp
