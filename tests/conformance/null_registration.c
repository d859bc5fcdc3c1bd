/* Rule (BSPlib 1998, bsp_push_reg): registering NULL with size 0 is legal (a process that
 * has no memory to offer still takes part in the collective registration) and may be done
 * more than once; some processes may register NULL where the others register a real area,
 * and then pop it with bsp_pop_reg(NULL) while the others pop their address, in either
 * order when two such registrations exist. Registrations made afterwards still work. */
#include "conformance.h"

#define SLOTS 64

static int b1[SLOTS], b2[SLOTS], ring[4];

/* Registration with the real area on pids of parity `real_parity`, NULL on the others. */
static const void* area(int real_parity, int* real) { return bsp_pid() % 2 == real_parity ? real : NULL; }
static int size(int real_parity) { return bsp_pid() % 2 == real_parity ? SLOTS * (int)sizeof(int) : 0; }

/* Every process with a real area writes its pid into slot pid of the first process with
 * one (the lowest pid of that parity), which checks them. */
static void use(int real_parity, int* real) {
  int p = bsp_nprocs(), me = bsp_pid();
  for (int i = 0; i < SLOTS; ++i) real[i] = -1;
  bsp_sync();
  if (real_parity >= p) return; /* no process has a real area */
  if (me % 2 == real_parity) bsp_put(real_parity, &me, real, me * (int)sizeof(int), sizeof me);
  bsp_sync();
  if (me == real_parity) {
    for (int q = 0; q < p; ++q) CHECK_INT(real[q], ==, q % 2 == real_parity ? q : -1);
  }
}

/* Ring of puts over a registration everyone makes: the registrations still match. */
static void ring_check(int round) {
  int p = bsp_nprocs(), me = bsp_pid();
  int right = (me + 1) % p, left = (me + p - 1) % p;
  ring[0] = -1;
  bsp_push_reg(ring, sizeof ring);
  bsp_sync();
  int value = 1000 * round + me;
  bsp_put(right, &value, ring, 0, sizeof value);
  bsp_sync();
  CHECK_INT(ring[0], ==, 1000 * round + left);
  bsp_pop_reg(ring);
  bsp_sync();
}

static void spmd(void) {
  bsp_begin(conformance_nprocs);
  CHECK_INT(bsp_nprocs(), <=, SLOTS);

  /* NULL on every process, twice. */
  bsp_push_reg(NULL, 0);
  bsp_push_reg(NULL, 0);
  bsp_sync();
  bsp_pop_reg(NULL);
  bsp_pop_reg(NULL);
  bsp_sync();
  ring_check(1);

  for (int real_parity = 1; real_parity >= 0; --real_parity) {
    /* One mixed registration. */
    bsp_push_reg(area(real_parity, b1), size(real_parity));
    bsp_sync();
    use(real_parity, b1);
    bsp_pop_reg(area(real_parity, b1));
    bsp_sync();
    ring_check(2 + real_parity);

    /* Two mixed registrations, popped most recent first. */
    bsp_push_reg(area(real_parity, b1), size(real_parity));
    bsp_push_reg(area(real_parity, b2), size(real_parity));
    bsp_sync();
    use(real_parity, b1);
    use(real_parity, b2);
    bsp_pop_reg(area(real_parity, b2));
    bsp_pop_reg(area(real_parity, b1));
    bsp_sync();
    ring_check(4 + real_parity);

    /* Two mixed registrations, popped oldest first, in one superstep. */
    bsp_push_reg(area(real_parity, b1), size(real_parity));
    bsp_push_reg(area(real_parity, b2), size(real_parity));
    bsp_sync();
    bsp_pop_reg(area(real_parity, b1));
    bsp_pop_reg(area(real_parity, b2));
    bsp_sync();
    ring_check(6 + real_parity);

    /* Two mixed registrations, popped oldest first, one per superstep. */
    bsp_push_reg(area(real_parity, b1), size(real_parity));
    bsp_push_reg(area(real_parity, b2), size(real_parity));
    bsp_sync();
    bsp_pop_reg(area(real_parity, b1));
    bsp_sync();
    bsp_pop_reg(area(real_parity, b2));
    bsp_sync();
    ring_check(8 + real_parity);
  }
  bsp_end();
}

CONFORMANCE_PROGRAM("null_registration", spmd)
