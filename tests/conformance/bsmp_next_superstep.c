/* Rule (BSPlib 1998, bsp_send / BSMP): a message sent in superstep s is in the
 * destination's queue in superstep s+1, not before: in s the receiver's queue does not
 * have it (however long it waits); in s+1 it does, with its tag and payload. */
#include "conformance.h"

static void spmd(void) {
  bsp_begin(conformance_nprocs);
  int p = bsp_nprocs(), me = bsp_pid();
  int tag_size = sizeof(int);
  bsp_set_tagsize(&tag_size);
  bsp_sync();
  for (int round = 0; round < 5; ++round) {
    /* Everyone sends one message to everyone (itself included). */
    for (int q = 0; q < p; ++q) {
      int tag = 100 * me + round, payload[2] = {me, q + round};
      bsp_send(q, &tag, payload, sizeof payload);
    }
    double start = bsp_time();
    while (bsp_time() < start + 0.005) {
      int count = -1, bytes = -1;
      bsp_qsize(&count, &bytes);
      CHECK_INT(count, ==, 0);
      CHECK_INT(bytes, ==, 0);
    }
    bsp_sync();
    int count = -1, bytes = -1;
    bsp_qsize(&count, &bytes);
    CHECK_INT(count, ==, p);
    CHECK_INT(bytes, ==, p * 2 * (int)sizeof(int));
    int seen[64] = {0};
    CHECK_INT(p, <=, 64);
    for (int i = 0; i < p; ++i) {
      int status = -2, tag = -1, payload[2] = {-1, -1};
      bsp_get_tag(&status, &tag);
      CHECK_INT(status, ==, 2 * (int)sizeof(int));
      int from = tag / 100;
      CHECK(from >= 0 && from < p);
      CHECK_INT(tag % 100, ==, round);
      bsp_move(payload, sizeof payload);
      CHECK_INT(payload[0], ==, from);
      CHECK_INT(payload[1], ==, me + round);
      seen[from] += 1;
    }
    for (int q = 0; q < p; ++q) CHECK_INT(seen[q], ==, 1);
  }
  bsp_end();
}

CONFORMANCE_PROGRAM("bsmp_next_superstep", spmd)
