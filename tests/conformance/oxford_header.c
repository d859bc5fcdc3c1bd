/* Rule (BSPlib 1998 as shipped by the Oxford BSP toolset, whose examples print without
 * including <stdio.h> themselves): bsp.h includes <stdio.h>, so a BSPlib program that
 * calls printf compiles with only "bsp.h" (built with -Werror=implicit-function-declaration:
 * an undeclared printf is an error, not a warning). */
#include "conformance.h"

static void spmd(void) {
  bsp_begin(conformance_nprocs);
  if (bsp_pid() == 0) {
    printf("hello from pid %d of %d\n", bsp_pid(), bsp_nprocs());
    fflush(stdout);
  }
  bsp_end();
}

CONFORMANCE_PROGRAM("oxford_header", spmd)
