/* Rule (BSPlib 1998, BSMP): a message can be accessed only in the superstep after it was
 * sent; messages not moved by then are gone after the next bsp_sync (the queue then holds
 * only the messages sent in the superstep just ended). */
#include "conformance.h"

static void spmd(void) {
  bsp_begin(conformance_nprocs);
  int p = bsp_nprocs(), me = bsp_pid();
  int right = (me + 1) % p, left = (me + p - 1) % p;
  int tag_size = sizeof(int);
  bsp_set_tagsize(&tag_size);
  bsp_sync();
  for (int k = 0; k < 3; ++k) {
    int tag = 10 + k;
    bsp_send(right, &tag, &me, sizeof me);
  }
  bsp_sync();
  int count = -1, bytes = -1;
  bsp_qsize(&count, &bytes);
  CHECK_INT(count, ==, 3);
  int payload = -1;
  bsp_move(&payload, sizeof payload); /* one of three moved, two left behind */
  CHECK_INT(payload, ==, left);
  int tag = 99;
  bsp_send(right, &tag, &me, sizeof me);
  bsp_sync();
  bsp_qsize(&count, &bytes);
  CHECK_INT(count, ==, 1);
  CHECK_INT(bytes, ==, (int)sizeof(int));
  int status = -2;
  tag = -1;
  bsp_get_tag(&status, &tag);
  CHECK_INT(status, ==, (int)sizeof(int));
  CHECK_INT(tag, ==, 99);
  /* None moved at all this time. */
  bsp_sync();
  bsp_qsize(&count, &bytes);
  CHECK_INT(count, ==, 0);
  CHECK_INT(bytes, ==, 0);
  bsp_end();
}

CONFORMANCE_PROGRAM("bsmp_unmoved_discarded", spmd)
