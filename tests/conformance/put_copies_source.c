/* Rule (BSPlib 1998, bsp_put): bsp_put is buffered: the source is copied at the call, so
 * the program may change or reuse it at once; the destination gets the value the source
 * had when bsp_put was called. */
#include "conformance.h"

#define N 16

static int dst[N], single;

static void spmd(void) {
  bsp_begin(conformance_nprocs);
  int p = bsp_nprocs(), me = bsp_pid();
  int right = (me + 1) % p, left = (me + p - 1) % p;
  for (int i = 0; i < N; ++i) dst[i] = -1;
  single = -1;
  bsp_push_reg(dst, sizeof dst);
  bsp_push_reg(&single, sizeof single);
  bsp_sync();

  /* One variable reused as the source of N puts. */
  int scratch;
  for (int i = 0; i < N; ++i) {
    scratch = 100 * me + i;
    bsp_put(right, &scratch, dst, i * (int)sizeof(int), sizeof scratch);
  }
  scratch = -7;
  /* A source changed right after the call. */
  int value = 42 + me;
  bsp_put(right, &value, &single, 0, sizeof value);
  value = -42;
  bsp_sync();
  for (int i = 0; i < N; ++i) CHECK_INT(dst[i], ==, 100 * left + i);
  CHECK_INT(single, ==, 42 + left);
  bsp_end();
}

CONFORMANCE_PROGRAM("put_copies_source", spmd)
