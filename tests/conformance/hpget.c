/* Rule (BSPlib 1998, bsp_hpget): the unbuffered get delivers the remote data by the end of
 * the superstep (the owner does not change it in that superstep). */
#include "conformance.h"

#define N 256

static int table[N];

static void spmd(void) {
  bsp_begin(conformance_nprocs);
  int p = bsp_nprocs(), me = bsp_pid();
  int right = (me + 1) % p;
  for (int i = 0; i < N; ++i) table[i] = 1000 * me + i;
  bsp_push_reg(table, sizeof table);
  bsp_sync();
  int copy[N], piece = -1;
  for (int i = 0; i < N; ++i) copy[i] = -1;
  bsp_hpget(right, table, 0, copy, sizeof copy);
  bsp_hpget(right, table, 17 * (int)sizeof(int), &piece, sizeof piece);
  bsp_sync();
  for (int i = 0; i < N; ++i) CHECK_INT(copy[i], ==, 1000 * right + i);
  CHECK_INT(piece, ==, 1000 * right + 17);
  bsp_end();
}

CONFORMANCE_PROGRAM("hpget", spmd)
