/* Rule (BSPlib 1998, bsp_put / bsp_sync): puts from one process into the same memory in
 * one superstep are applied in the order they were called: where they overlap, the last
 * call's data is what remains. */
#include "conformance.h"

static int word, area[4];

static void spmd(void) {
  bsp_begin(conformance_nprocs);
  int p = bsp_nprocs(), me = bsp_pid();
  int right = (me + 1) % p, left = (me + p - 1) % p;
  word = -1;
  for (int i = 0; i < 4; ++i) area[i] = -1;
  bsp_push_reg(&word, sizeof word);
  bsp_push_reg(area, sizeof area);
  bsp_sync();
  for (int round = 0; round < 3; ++round) {
    for (int i = 1; i <= 10; ++i) {
      int value = 1000 * round + 100 * me + i; /* the last one, i = 10, must remain */
      bsp_put(right, &value, &word, 0, sizeof value);
    }
    /* Overlapping pieces: [1 2 3 4], then [5 6] at word 1, then [7] at word 0. */
    int four[4] = {1, 2, 3, 4}, two[2] = {5, 6}, one = 7 + me + round;
    bsp_put(right, four, area, 0, sizeof four);
    bsp_put(right, two, area, sizeof(int), sizeof two);
    bsp_put(right, &one, area, 0, sizeof one);
    bsp_sync();
    CHECK_INT(word, ==, 1000 * round + 100 * left + 10);
    CHECK_INT(area[0], ==, 7 + left + round);
    CHECK_INT(area[1], ==, 5);
    CHECK_INT(area[2], ==, 6);
    CHECK_INT(area[3], ==, 4);
  }
  bsp_end();
}

CONFORMANCE_PROGRAM("put_last_wins", spmd)
