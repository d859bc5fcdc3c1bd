/* Rule (BSPlib 1998, bsp_put / bsp_sync): data put in a superstep is written into the
 * destination at the end of that superstep (at bsp_sync), not before: until this process
 * calls bsp_sync the destination keeps its old value, however long it waits; after
 * bsp_sync it holds the new one. */
#include "conformance.h"

static int from_left, from_self;

static void spmd(void) {
  bsp_begin(conformance_nprocs);
  int p = bsp_nprocs(), me = bsp_pid();
  int right = (me + 1) % p, left = (me + p - 1) % p;
  from_left = from_self = -1;
  bsp_push_reg(&from_left, sizeof from_left);
  bsp_push_reg(&from_self, sizeof from_self);
  bsp_sync();
  for (int round = 0; round < 3; ++round) {
    int value = 1000 * round + me;
    bsp_put(right, &value, &from_left, 0, sizeof value);
    bsp_put(me, &value, &from_self, 0, sizeof value);
    int old = round == 0 ? -1 : 1000 * (round - 1);
    /* Give early delivery every chance: 20 ms. */
    double start = bsp_time();
    while (bsp_time() < start + 0.020) {
      CHECK_INT(from_left, ==, round == 0 ? -1 : old + left);
      CHECK_INT(from_self, ==, round == 0 ? -1 : old + me);
    }
    bsp_sync();
    CHECK_INT(from_left, ==, 1000 * round + left);
    CHECK_INT(from_self, ==, 1000 * round + me);
  }
  bsp_end();
}

CONFORMANCE_PROGRAM("put_lands_at_sync", spmd)
