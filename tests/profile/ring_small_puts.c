/* tests/profile/ring_small_puts.c: a ring of 4-byte puts, 20 supersteps: no superstep
 * has h >= 8 words, so bspprof's g-over-time graph has no point to draw (it must still
 * render, saying why). */
#include "bsp.h"

int main(void) {
  bsp_begin(bsp_nprocs());
  int p = bsp_nprocs(), me = bsp_pid(), left = -1;
  bsp_push_reg(&left, sizeof left);
  bsp_sync();
  for (int round = 0; round < 20; ++round) {
    int value = me + round;
    bsp_put((me + 1) % p, &value, &left, 0, sizeof value);
    bsp_sync();
    if (left != (me + p - 1) % p + round) bsp_abort("ring_small_puts: pid %d got %d in round %d\n", me, left, round);
  }
  bsp_end();
  return 0;
}
