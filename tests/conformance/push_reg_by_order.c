/* Rule (BSPlib 1998, bsp_push_reg): registration is collective and takes effect at the
 * next bsp_sync; the n-th registration of every process is matched with the n-th of the
 * others, whatever the addresses and sizes each process passes. A process names a remote
 * area by its OWN local address of the matching registration. */
#include "conformance.h"

#define WORDS 64

static int area_a[WORDS], area_b[WORDS];
static int first[4], second[4];

static void spmd(void) {
  bsp_begin(conformance_nprocs);
  int p = bsp_nprocs(), me = bsp_pid();
  int right = (me + 1) % p, left = (me + p - 1) % p;
  CHECK_INT(p, <, WORDS - 4);

  /* Different addresses (even pids area_a, odd pids area_b) and sizes ((4 + pid) words). */
  int* mine = me % 2 ? area_b : area_a;
  int* other = me % 2 ? area_a : area_b;
  for (int i = 0; i < WORDS; ++i) area_a[i] = area_b[i] = 0;
  bsp_push_reg(mine, (4 + me) * (int)sizeof(int));
  bsp_sync(); /* in effect from here */

  int values[4] = {me + 1, 10 * me + 2, 100 * me + 3, -me - 4};
  bsp_put(right, values, mine, 0, sizeof values);
  int last = 7000 + me; /* into the last word of the right neighbour's (4 + right) words */
  bsp_put(right, &last, mine, (4 + right - 1) * (int)sizeof(int), sizeof last);
  bsp_sync();
  CHECK_INT(mine[0], ==, left + 1);
  CHECK_INT(mine[1], ==, 10 * left + 2);
  CHECK_INT(mine[2], ==, 100 * left + 3);
  if (4 + me - 1 > 3) CHECK_INT(mine[3], ==, -left - 4);
  CHECK_INT(mine[4 + me - 1], ==, 7000 + left);
  for (int i = 0; i < WORDS; ++i) CHECK_INT(other[i], ==, 0);

  /* Two registrations pushed in opposite orders on even and odd pids: the order, not the
   * address, decides which areas are matched. */
  for (int i = 0; i < 4; ++i) first[i] = second[i] = -1;
  if (me % 2 == 0) {
    bsp_push_reg(first, sizeof first);
    bsp_push_reg(second, sizeof second);
  } else {
    bsp_push_reg(second, sizeof second);
    bsp_push_reg(first, sizeof first);
  }
  bsp_sync();
  int token = 500 + me;
  bsp_put(right, &token, first, 0, sizeof token); /* my 2nd or 3rd registration */
  bsp_sync();
  /* The left neighbour named its `first`: its 2nd registration if it is even, its 3rd if
   * odd. Here the 2nd is `first` on even pids and `second` on odd ones, and the 3rd the
   * other way round: the put landed in `first` exactly when both pids have the same parity. */
  int* expected = left % 2 == me % 2 ? first : second;
  int* untouched = expected == first ? second : first;
  CHECK_INT(expected[0], ==, 500 + left);
  CHECK_INT(untouched[0], ==, -1);
  bsp_end();
}

CONFORMANCE_PROGRAM("push_reg_by_order", spmd)
