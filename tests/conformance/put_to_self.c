/* Rule (BSPlib 1998, bsp_put): a process may put into its own registered memory (pid ==
 * bsp_pid()); as for any put, the source is copied at the call and the data lands at
 * bsp_sync. */
#include "conformance.h"

static int mine[8];

static void spmd(void) {
  bsp_begin(conformance_nprocs);
  int me = bsp_pid();
  for (int i = 0; i < 8; ++i) mine[i] = -1;
  bsp_push_reg(mine, sizeof mine);
  bsp_sync();
  int values[4] = {me, me + 1, me + 2, me + 3};
  bsp_put(me, values, mine, 2 * sizeof(int), sizeof values);
  values[0] = -100;
  CHECK_INT(mine[2], ==, -1);
  bsp_sync();
  for (int i = 0; i < 8; ++i) CHECK_INT(mine[i], ==, i >= 2 && i < 6 ? me + i - 2 : -1);
  bsp_end();
}

CONFORMANCE_PROGRAM("put_to_self", spmd)
