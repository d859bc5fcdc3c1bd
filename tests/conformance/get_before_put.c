/* Rule (BSPlib 1998, bsp_get / bsp_sync): a get of a remote word returns the word's value
 * before that superstep's puts, even when a put to the same word is issued in the same
 * superstep (before the get, by the getter itself, or by another process). */
#include "conformance.h"

static int word;

static void spmd(void) {
  bsp_begin(conformance_nprocs);
  int p = bsp_nprocs(), me = bsp_pid();
  int right = (me + 1) % p, left = (me + p - 1) % p;
  bsp_push_reg(&word, sizeof word);
  bsp_sync();
  for (int round = 0; round < 20; ++round) {
    word = 100 * me + round; /* the old value */
    bsp_sync();

    /* I put into right's word, then get it. */
    int got = -1, fresh = 50000 + 100 * me + round;
    bsp_put(right, &fresh, &word, 0, sizeof fresh);
    bsp_get(right, &word, 0, &got, sizeof got);
    bsp_sync();
    CHECK_INT(got, ==, 100 * right + round);
    CHECK_INT(word, ==, 50000 + 100 * left + round);

    /* The left neighbour puts into my right neighbour's word... rather: the process two
     * to my left puts into my right neighbour's word while I get it. */
    word = 100 * me + round;
    bsp_sync();
    int target = (me + 2) % p;
    got = -1;
    fresh = 60000 + 100 * me + round;
    bsp_put(target, &fresh, &word, 0, sizeof fresh);
    bsp_get(right, &word, 0, &got, sizeof got);
    bsp_sync();
    CHECK_INT(got, ==, 100 * right + round);
    CHECK_INT(word, ==, 60000 + 100 * ((me + p - 2) % p) + round);
  }
  bsp_end();
}

CONFORMANCE_PROGRAM("get_before_put", spmd)
