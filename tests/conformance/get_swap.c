/* Rule (BSPlib 1998, bsp_get / bsp_sync): a get reads the remote memory at the end of the
 * superstep, before any of that superstep's writes: two partners that each get the
 * other's x into their own x, bsp_get(partner, &x, 0, &x, sizeof x), swap their values;
 * both hold the partner's old value. 200 supersteps with changing values; pairs are
 * pid ^ 1, and with an odd P the last process gets from itself (its x stays). */
#include "conformance.h"

static int x;

static void spmd(void) {
  bsp_begin(conformance_nprocs);
  int p = bsp_nprocs(), me = bsp_pid();
  int partner = (me ^ 1) < p ? (me ^ 1) : me;
  bsp_push_reg(&x, sizeof x);
  bsp_sync();
  for (int step = 0; step < 200; ++step) {
    x = 1000 * me + step;
    bsp_get(partner, &x, 0, &x, sizeof x);
    bsp_sync();
    CHECK_INT(x, ==, 1000 * partner + step);
  }
  bsp_end();
}

CONFORMANCE_PROGRAM("get_swap", spmd)
