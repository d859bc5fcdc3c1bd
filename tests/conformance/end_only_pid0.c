/* Rule (BSPlib 1998, bsp_end): bsp_end is the last statement of the SPMD part; only
 * process 0 continues after it (the others end). Every process prints a line after
 * bsp_end; the driver checks that exactly one, pid 0's, appears. */
#include "conformance.h"

static void spmd(void) {
  bsp_begin(conformance_nprocs);
  int me = bsp_pid();
  bsp_sync();
  bsp_end();
  conformance_say("after-end pid %d\n", me);
}

CONFORMANCE_PROGRAM("end_only_pid0", spmd)
