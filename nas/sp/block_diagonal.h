// nas/sp/block_diagonal.h: the point-wise 5x5 block-diagonal products of SP's
// diagonalised ADI: txinvr (into the characteristic variables before the x solve),
// ninvr (between x and y), pinvr (between y and z) and tzetar (back to the conserved
// variables after the z solve), each as NPB specifies the arithmetic. r holds the 5
// right-hand-side components of one point.
#pragma once

namespace nas::sp {

inline void txinvr_point(double* r, double rho_i, double uu, double vv, double ww, double qs, double ac, double ainv,
                         double c2, double bt) {
  const double ac2inv = ainv * ainv;
  const double r1 = r[0], r2 = r[1], r3 = r[2], r4 = r[3], r5 = r[4];
  const double t1 = c2 * ac2inv * (qs * r1 - uu * r2 - vv * r3 - ww * r4 + r5);
  const double t2 = bt * rho_i * (uu * r1 - r2);
  const double t3 = (bt * rho_i * ac) * t1;
  r[0] = r1 - t1;
  r[1] = -rho_i * (ww * r1 - r4);
  r[2] = rho_i * (vv * r1 - r3);
  r[3] = -t2 + t3;
  r[4] = t2 + t3;
}

inline void ninvr_point(double* r, double bt) {
  const double r1 = r[0], r2 = r[1], r3 = r[2], r4 = r[3], r5 = r[4];
  const double t1 = bt * r3;
  const double t2 = 0.5 * (r4 + r5);
  r[0] = -r2;
  r[1] = r1;
  r[2] = bt * (r4 - r5);
  r[3] = -t1 + t2;
  r[4] = t1 + t2;
}

inline void pinvr_point(double* r, double bt) {
  const double r1 = r[0], r2 = r[1], r3 = r[2], r4 = r[3], r5 = r[4];
  const double t1 = bt * r1;
  const double t2 = 0.5 * (r4 + r5);
  r[0] = bt * (r4 - r5);
  r[1] = -r3;
  r[2] = r2;
  r[3] = -t1 + t2;
  r[4] = t1 + t2;
}

inline void tzetar_point(double* r, double xvel, double yvel, double zvel, double ac, double acinv, double qs,
                         double uzik1, double bt, double c2iv) {
  const double ac2u = ac * ac;
  const double r1 = r[0], r2 = r[1], r3 = r[2], r4 = r[3], r5 = r[4];
  const double btuz = bt * uzik1;
  const double t1 = btuz * acinv * (r4 + r5);
  const double t2 = r3 + t1;
  const double t3 = btuz * (r4 - r5);
  r[0] = t2;
  r[1] = -uzik1 * r2 + xvel * t2;
  r[2] = uzik1 * r1 + yvel * t2;
  r[3] = zvel * t2 + t3;
  r[4] = uzik1 * (-xvel * r2 + yvel * r1) + qs * t2 + c2iv * ac2u * t1 + zvel * t3;
}

}  // namespace nas::sp
