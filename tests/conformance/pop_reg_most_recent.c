/* Rule (BSPlib 1998, bsp_push_reg / bsp_pop_reg): when an address is registered more than
 * once, it names its most recent registration; bsp_pop_reg removes the most recent
 * registration of the address, from the next bsp_sync (in the superstep of the pop it can
 * still be used), after which the address names its earlier registration again. Pops
 * need not be in reverse order of pushes.
 *
 * Even pids register x twice; odd pids register a, then c, at the same places in the
 * sequence: on odd pids one can tell which of the two registrations a put landed in. */
#include "conformance.h"

static int x[4], a[4], c[4], y[4], z[4];

static void clear(void) {
  for (int i = 0; i < 4; ++i) x[i] = a[i] = c[i] = y[i] = z[i] = 0;
}

static void spmd(void) {
  bsp_begin(conformance_nprocs);
  int p = bsp_nprocs(), me = bsp_pid();
  int right = (me + 1) % p, left = (me + p - 1) % p;
  int even = me % 2 == 0;
  clear();
  bsp_push_reg(even ? x : a, sizeof x); /* registration A */
  bsp_push_reg(y, sizeof y);            /* registration B */
  bsp_push_reg(even ? x : c, sizeof x); /* registration C: x's most recent on even pids */
  bsp_sync();

  /* x (even) and c (odd) name C. */
  int value = 100 + me;
  bsp_put(right, &value, even ? x : c, 0, sizeof value);
  bsp_sync();
  if (even) {
    CHECK_INT(x[0], ==, 100 + left);
  } else {
    CHECK_INT(c[0], ==, 100 + left);
    CHECK_INT(a[0], ==, 0);
  }

  /* Pop C; in this superstep C is still in effect. */
  bsp_pop_reg(even ? x : c);
  value = 200 + me;
  bsp_put(right, &value, even ? x : c, 0, sizeof value);
  bsp_sync();
  if (even) {
    CHECK_INT(x[0], ==, 200 + left);
  } else {
    CHECK_INT(c[0], ==, 200 + left);
    CHECK_INT(a[0], ==, 0);
  }

  /* Now x (even) and a (odd) name A. */
  value = 300 + me;
  bsp_put(right, &value, even ? x : a, sizeof(int), sizeof value);
  bsp_sync();
  if (even) {
    CHECK_INT(x[1], ==, 300 + left);
  } else {
    CHECK_INT(a[1], ==, 300 + left);
    CHECK_INT(c[1], ==, 0);
  }

  /* Pop B (pushed after A, popped before it), then A; registrations made afterwards
   * still match by order. */
  bsp_pop_reg(y);
  bsp_sync();
  value = 400 + me;
  bsp_put(right, &value, even ? x : a, 2 * sizeof(int), sizeof value);
  bsp_pop_reg(even ? x : a);
  bsp_push_reg(z, sizeof z);
  bsp_sync();
  if (even) {
    CHECK_INT(x[2], ==, 400 + left);
  } else {
    CHECK_INT(a[2], ==, 400 + left);
  }
  value = 500 + me;
  bsp_put(right, &value, z, 3 * sizeof(int), sizeof value);
  bsp_sync();
  CHECK_INT(z[3], ==, 500 + left);
  bsp_end();
}

CONFORMANCE_PROGRAM("pop_reg_most_recent", spmd)
