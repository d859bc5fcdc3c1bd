// nas/sp/sp_constants.cc: SP's class table and constants (see sp_constants.h). Values and
// formulas follow the NPB specification of SP.
#include "nas/sp/sp_constants.h"

#include <algorithm>
#include <cmath>

namespace nas::sp {

const nas::ClassTable<SpClass>& sp_classes() {
  static const nas::ClassTable<SpClass> table = {
      {'S',
       {12,
        100,
        0.015,
        {2.7470315451339479e-02, 1.0360746705285417e-02, 1.6235745065095532e-02, 1.5840557224455615e-02,
         3.4849040609362460e-02},
        {2.7289258557377227e-05, 1.0364446640837285e-05, 1.6154798287166471e-05, 1.5750704994480102e-05,
         3.4177666183390531e-05}}},
      {'W',
       {36,
        400,
        0.0015,
        {0.1893253733584e-02, 0.1717075447775e-03, 0.2778153350936e-03, 0.2887475409984e-03, 0.3143611161242e-02},
        {0.7542088599534e-04, 0.6512852253086e-05, 0.1049092285688e-04, 0.1128838671535e-04, 0.1212845639773e-03}}},
      {'A',
       {64,
        400,
        0.0015,
        {2.4799822399300195, 1.1276337964368832, 1.5028977888770491, 1.4217816211695179, 2.1292113035138280},
        {1.0900140297820550e-04, 3.7343951769282091e-05, 5.0092785406541633e-05, 4.7671093939528255e-05,
         1.3621613399213001e-04}}},
      {'B',
       {102,
        400,
        0.001,
        {0.6903293579998e+02, 0.3095134488084e+02, 0.4103336647017e+02, 0.3864769009604e+02, 0.5643482272596e+02},
        {0.9810006190188e-02, 0.1022827905670e-02, 0.1720597911692e-02, 0.1694479428231e-02, 0.1847456263981e-01}}},
      {'C',
       {162,
        400,
        0.00067,
        {0.5881691581829e+03, 0.2454417603569e+03, 0.3293829191851e+03, 0.3081924971891e+03, 0.4597223799176e+03},
        {0.2598120500183e+00, 0.2590888922315e-01, 0.5132886416320e-01, 0.4806073419454e-01, 0.5483377491301e+00}}},
  };
  return table;
}

SpConstants make_constants(int n, double dt) {
  SpConstants k{};
  k.n = n;
  k.dt = dt;
  k.c1 = kGasC1;
  k.c2 = kGasC2;
  k.c3 = kGasC3;
  k.c4 = kGasC4;
  k.c5 = kGasC5;
  k.bt = std::sqrt(0.5);
  k.dnxm1 = 1.0 / double(n - 1);
  k.dnym1 = 1.0 / double(n - 1);
  k.dnzm1 = 1.0 / double(n - 1);
  k.c1c2 = k.c1 * k.c2;
  k.c1c5 = k.c1 * k.c5;
  k.c3c4 = k.c3 * k.c4;
  k.c1345 = k.c1c5 * k.c3c4;
  k.conz1 = 1.0 - k.c1c5;
  k.tx1 = 1.0 / (k.dnxm1 * k.dnxm1);
  k.tx2 = 1.0 / (2.0 * k.dnxm1);
  k.tx3 = 1.0 / k.dnxm1;
  k.ty1 = 1.0 / (k.dnym1 * k.dnym1);
  k.ty2 = 1.0 / (2.0 * k.dnym1);
  k.ty3 = 1.0 / k.dnym1;
  k.tz1 = 1.0 / (k.dnzm1 * k.dnzm1);
  k.tz2 = 1.0 / (2.0 * k.dnzm1);
  k.tz3 = 1.0 / k.dnzm1;
  k.dx1 = k.dx2 = k.dx3 = k.dx4 = k.dx5 = 0.75;
  k.dy1 = k.dy2 = k.dy3 = k.dy4 = k.dy5 = 0.75;
  k.dz1 = k.dz2 = k.dz3 = k.dz4 = k.dz5 = 1.0;
  k.dxmax = std::max(k.dx3, k.dx4);
  k.dymax = std::max(k.dy2, k.dy4);
  k.dzmax = std::max(k.dz2, k.dz3);
  k.dssp = 0.25 * std::max(k.dx1, std::max(k.dy1, k.dz1));
  k.c4dssp = 4.0 * k.dssp;
  k.c5dssp = 5.0 * k.dssp;
  k.dttx1 = dt * k.tx1;
  k.dttx2 = dt * k.tx2;
  k.dtty1 = dt * k.ty1;
  k.dtty2 = dt * k.ty2;
  k.dttz1 = dt * k.tz1;
  k.dttz2 = dt * k.tz2;
  k.c2dttx1 = 2.0 * k.dttx1;
  k.c2dtty1 = 2.0 * k.dtty1;
  k.c2dttz1 = 2.0 * k.dttz1;
  k.dtdssp = dt * k.dssp;
  k.comz1 = k.dtdssp;
  k.comz4 = 4.0 * k.dtdssp;
  k.comz5 = 5.0 * k.dtdssp;
  k.comz6 = 6.0 * k.dtdssp;
  k.c3c4tx3 = k.c3c4 * k.tx3;
  k.c3c4ty3 = k.c3c4 * k.ty3;
  k.c3c4tz3 = k.c3c4 * k.tz3;
  k.dx1tx1 = k.dx1 * k.tx1;
  k.dx2tx1 = k.dx2 * k.tx1;
  k.dx3tx1 = k.dx3 * k.tx1;
  k.dx4tx1 = k.dx4 * k.tx1;
  k.dx5tx1 = k.dx5 * k.tx1;
  k.dy1ty1 = k.dy1 * k.ty1;
  k.dy2ty1 = k.dy2 * k.ty1;
  k.dy3ty1 = k.dy3 * k.ty1;
  k.dy4ty1 = k.dy4 * k.ty1;
  k.dy5ty1 = k.dy5 * k.ty1;
  k.dz1tz1 = k.dz1 * k.tz1;
  k.dz2tz1 = k.dz2 * k.tz1;
  k.dz3tz1 = k.dz3 * k.tz1;
  k.dz4tz1 = k.dz4 * k.tz1;
  k.dz5tz1 = k.dz5 * k.tz1;
  k.c2iv = 2.5;
  k.con43 = 4.0 / 3.0;
  k.con16 = 1.0 / 6.0;
  k.xxcon1 = k.c3c4tx3 * k.con43 * k.tx3;
  k.xxcon2 = k.c3c4tx3 * k.tx3;
  k.xxcon3 = k.c3c4tx3 * k.conz1 * k.tx3;
  k.xxcon4 = k.c3c4tx3 * k.con16 * k.tx3;
  k.xxcon5 = k.c3c4tx3 * k.c1c5 * k.tx3;
  k.yycon1 = k.c3c4ty3 * k.con43 * k.ty3;
  k.yycon2 = k.c3c4ty3 * k.ty3;
  k.yycon3 = k.c3c4ty3 * k.conz1 * k.ty3;
  k.yycon4 = k.c3c4ty3 * k.con16 * k.ty3;
  k.yycon5 = k.c3c4ty3 * k.c1c5 * k.ty3;
  k.zzcon1 = k.c3c4tz3 * k.con43 * k.tz3;
  k.zzcon2 = k.c3c4tz3 * k.tz3;
  k.zzcon3 = k.c3c4tz3 * k.conz1 * k.tz3;
  k.zzcon4 = k.c3c4tz3 * k.con16 * k.tz3;
  k.zzcon5 = k.c3c4tz3 * k.c1c5 * k.tz3;
  return k;
}

}  // namespace nas::sp
