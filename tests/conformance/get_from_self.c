/* Rule (BSPlib 1998, bsp_get / bsp_sync): a process may get from itself; like any get it
 * reads the value at the end of the superstep before that superstep's puts, including
 * puts to that word by itself or others. */
#include "conformance.h"

static int word;

static void spmd(void) {
  bsp_begin(conformance_nprocs);
  int p = bsp_nprocs(), me = bsp_pid();
  int left = (me + p - 1) % p, right = (me + 1) % p;
  bsp_push_reg(&word, sizeof word);
  bsp_sync();
  for (int round = 0; round < 20; ++round) {
    word = 100 * me + round;
    int got = -1;
    bsp_get(me, &word, 0, &got, sizeof got);
    bsp_sync();
    CHECK_INT(got, ==, 100 * me + round);

    /* A put to myself and one from the left neighbour, then a get from myself. */
    int to_self = 70000 + round, to_right = 80000 + 100 * me + round;
    bsp_put(me, &to_self, &word, 0, sizeof to_self);
    if (p > 1) bsp_put(right, &to_right, &word, 0, sizeof to_right);
    got = -1;
    bsp_get(me, &word, 0, &got, sizeof got);
    bsp_sync();
    CHECK_INT(got, ==, 100 * me + round);
    CHECK(word == 70000 + round || (p > 1 && word == 80000 + 100 * left + round));
  }
  bsp_end();
}

CONFORMANCE_PROGRAM("get_from_self", spmd)
