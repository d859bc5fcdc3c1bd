/* Expected failure (BSPlib 1998, bsp_sync / bsp_end are collective): pid 0 calls bsp_sync
 * while the others call bsp_end. The job must stop (not hang) with a non-zero exit and a
 * message saying the collective calls are mismatched (bsp_sync against bsp_end) and in
 * which superstep. */
#include "conformance.h"

static void spmd(void) {
  bsp_begin(conformance_nprocs);
  bsp_sync();
  if (bsp_pid() == 0) bsp_sync();
  bsp_end();
}

CONFORMANCE_PROGRAM("fail_mismatched_sync", spmd)
