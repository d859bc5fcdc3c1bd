/* Rule (BSPlib 1998, bsp_get): the value a get returns is the remote memory at the end of
 * the superstep (after the owner's local computation in that superstep), not at the call:
 * the owner changes the word after the getter has issued its bsp_get, and the getter
 * receives the changed value. The getter's destination is written at bsp_sync. */
#include "conformance.h"

static int word;

static void spmd(void) {
  bsp_begin(conformance_nprocs);
  int p = bsp_nprocs(), me = bsp_pid();
  int right = (me + 1) % p;
  bsp_push_reg(&word, sizeof word);
  word = -5;
  bsp_sync();
  for (int round = 0; round < 10; ++round) {
    int got = -1;
    bsp_get(right, &word, 0, &got, sizeof got);
    CHECK_INT(got, ==, -1);
    /* Every process's own local computation, after the gets were issued everywhere
     * (the issue happens before this process's bsp_sync; the owner's write happens before
     * its own bsp_sync, hence before the end of the superstep). */
    word = 1000 * me + round;
    bsp_sync();
    CHECK_INT(got, ==, 1000 * right + round);
  }
  bsp_end();
}

CONFORMANCE_PROGRAM("get_reads_at_sync", spmd)
