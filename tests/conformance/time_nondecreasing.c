/* Rule (BSPlib 1998, bsp_time): bsp_time() is the elapsed time in seconds since
 * bsp_begin on this process: never negative, never decreasing, and it advances. */
#include "conformance.h"

static void spmd(void) {
  bsp_begin(conformance_nprocs);
  double previous = bsp_time();
  CHECK(previous >= 0.0);
  for (int step = 0; step < 50; ++step) {
    for (int i = 0; i < 1000; ++i) {
      double now = bsp_time();
      CHECK(now >= previous);
      previous = now;
    }
    bsp_sync();
    double now = bsp_time();
    CHECK(now >= previous);
    previous = now;
  }
  /* It advances: 10 ms of waiting show up (and the loop ends). */
  double start = bsp_time();
  while (bsp_time() < start + 0.010) {
  }
  CHECK(bsp_time() - start >= 0.010);
  CHECK(bsp_time() < start + 60.0);
  bsp_end();
}

CONFORMANCE_PROGRAM("time_nondecreasing", spmd)
