/* Rule (BSPlib 1998, bsp_get / bsp_put / bsp_sync): when, in one superstep, a get brings
 * data into a word and a put writes the same word, the put's value is what remains (gets
 * are satisfied before puts are applied). The put comes from this process itself, or
 * from another process. */
#include "conformance.h"

static int source, word;

static void spmd(void) {
  bsp_begin(conformance_nprocs);
  int p = bsp_nprocs(), me = bsp_pid();
  int right = (me + 1) % p, left = (me + p - 1) % p;
  bsp_push_reg(&source, sizeof source);
  bsp_push_reg(&word, sizeof word);
  bsp_sync();
  for (int round = 0; round < 20; ++round) {
    source = 10000 + 100 * me + round;
    word = -1;
    bsp_sync();

    /* Get into word, then put into it myself. */
    bsp_get(right, &source, 0, &word, sizeof word);
    int mine = 20000 + 100 * me + round;
    bsp_put(me, &mine, &word, 0, sizeof mine);
    bsp_sync();
    CHECK_INT(word, ==, 20000 + 100 * me + round);

    /* Get into word while the left neighbour puts into it. */
    word = -1;
    bsp_get(right, &source, 0, &word, sizeof word);
    int to_right = 30000 + 100 * me + round;
    bsp_put(right, &to_right, &word, 0, sizeof to_right);
    bsp_sync();
    CHECK_INT(word, ==, 30000 + 100 * left + round);
  }
  bsp_end();
}

CONFORMANCE_PROGRAM("get_then_put", spmd)
