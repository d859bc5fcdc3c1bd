/* Rule (BSPlib 1998, bsp_pid / bsp_nprocs): inside the SPMD part every process has a
 * distinct pid in 0..P-1 and bsp_nprocs() is P on every process, the number pid 0 asked
 * bsp_begin for; before bsp_begin, bsp_nprocs() says how many processes are available
 * (at least one). Neither changes from superstep to superstep. */
#include "conformance.h"

#define MAX_PROCS 1024

static int pid_in_slot[MAX_PROCS];
static int nprocs_seen[MAX_PROCS];

static void spmd(void) {
  bsp_begin(conformance_nprocs);
  int p = bsp_nprocs(), me = bsp_pid();
  CHECK_INT(p, >=, 1);
  CHECK_INT(p, <=, MAX_PROCS);
  CHECK(me >= 0 && me < p);
  if (conformance_available != -1) CHECK_INT(conformance_available, >=, 1);
  if (me == 0) CHECK_INT(p, ==, conformance_nprocs);
  for (int i = 0; i < MAX_PROCS; ++i) pid_in_slot[i] = nprocs_seen[i] = -1;
  bsp_push_reg(pid_in_slot, sizeof pid_in_slot);
  bsp_push_reg(nprocs_seen, sizeof nprocs_seen);
  bsp_sync();
  /* Everyone writes its pid into slot pid of pid 0's table: two processes with the same
   * pid would leave a slot empty. */
  bsp_put(0, &me, pid_in_slot, me * (int)sizeof(int), sizeof(int));
  bsp_put(0, &p, nprocs_seen, me * (int)sizeof(int), sizeof(int));
  bsp_sync();
  if (me == 0) {
    for (int i = 0; i < p; ++i) {
      CHECK_INT(pid_in_slot[i], ==, i);
      CHECK_INT(nprocs_seen[i], ==, p);
    }
    for (int i = p; i < MAX_PROCS; ++i) CHECK_INT(pid_in_slot[i], ==, -1);
  }
  for (int step = 0; step < 5; ++step) {
    CHECK_INT(bsp_pid(), ==, me);
    CHECK_INT(bsp_nprocs(), ==, p);
    bsp_sync();
  }
  bsp_end();
}

CONFORMANCE_PROGRAM("pid_nprocs", spmd)
