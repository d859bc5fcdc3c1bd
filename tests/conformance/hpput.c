/* Rule (BSPlib 1998, bsp_hpput): the unbuffered put delivers its data by the end of the
 * superstep like bsp_put; the program leaves the source untouched until bsp_sync (the
 * library may read it at any time until then), and the library does not change it. */
#include "conformance.h"

#define N 256

static int source[N], destination[N];

static void spmd(void) {
  bsp_begin(conformance_nprocs);
  int p = bsp_nprocs(), me = bsp_pid();
  int right = (me + 1) % p, left = (me + p - 1) % p;
  for (int i = 0; i < N; ++i) {
    source[i] = 1000 * me + i;
    destination[i] = -1;
  }
  bsp_push_reg(destination, sizeof destination);
  bsp_sync();
  bsp_hpput(right, source, destination, 0, N / 2 * (int)sizeof(int));
  bsp_hpput(right, source + N / 2, destination, N / 2 * (int)sizeof(int), N / 2 * (int)sizeof(int));
  bsp_sync();
  for (int i = 0; i < N; ++i) {
    CHECK_INT(destination[i], ==, 1000 * left + i);
    CHECK_INT(source[i], ==, 1000 * me + i);
  }
  bsp_end();
}

CONFORMANCE_PROGRAM("hpput", spmd)
