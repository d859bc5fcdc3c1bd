/* Rule (BSPlib 1998, bsp_sync): a superstep need not communicate: 1000 bsp_sync calls in a
 * row with nothing posted all complete, and communication afterwards still works. */
#include "conformance.h"

static int word;

static void spmd(void) {
  bsp_begin(conformance_nprocs);
  int p = bsp_nprocs(), me = bsp_pid();
  int right = (me + 1) % p, left = (me + p - 1) % p;
  bsp_push_reg(&word, sizeof word);
  double previous = bsp_time();
  for (int step = 0; step < 1000; ++step) {
    bsp_sync();
    double now = bsp_time();
    CHECK(now >= previous);
    previous = now;
  }
  word = -1;
  bsp_put(right, &me, &word, 0, sizeof me);
  bsp_sync();
  CHECK_INT(word, ==, left);
  bsp_end();
}

CONFORMANCE_PROGRAM("empty_supersteps", spmd)
