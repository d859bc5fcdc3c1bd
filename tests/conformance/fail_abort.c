/* Expected failure (BSPlib 1998, bsp_abort): one process calls bsp_abort while the others
 * wait in bsp_sync: every process stops, the message is printed once, the exit status is
 * non-zero. */
#include "conformance.h"

static void spmd(void) {
  bsp_begin(conformance_nprocs);
  bsp_sync();
  if (bsp_pid() == bsp_nprocs() - 1) bsp_abort("conformance fail_abort: stopped by pid %d\n", bsp_pid());
  bsp_sync();
  bsp_end();
}

CONFORMANCE_PROGRAM("fail_abort", spmd)
