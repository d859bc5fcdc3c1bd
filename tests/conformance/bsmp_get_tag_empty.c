/* Rule (BSPlib 1998, bsp_get_tag): on an empty queue bsp_get_tag sets status to -1 (and
 * leaves the tag buffer unchanged); otherwise status is the first message's payload size,
 * 0 for a message without payload. */
#include "conformance.h"

static void spmd(void) {
  bsp_begin(conformance_nprocs);
  int p = bsp_nprocs(), me = bsp_pid();
  int right = (me + 1) % p;
  int tag_size = sizeof(int);
  bsp_set_tagsize(&tag_size);
  bsp_sync();
  int status = 99, tag = 12345;
  bsp_get_tag(&status, &tag);
  CHECK_INT(status, ==, -1);
  CHECK_INT(tag, ==, 12345);

  int out = 7 + me;
  bsp_send(right, &out, NULL, 0);
  bsp_sync();
  status = 99;
  bsp_get_tag(&status, &tag);
  CHECK_INT(status, ==, 0); /* an empty payload is not an empty queue */
  CHECK_INT(tag, ==, 7 + (me + p - 1) % p);
  int nothing = -1;
  bsp_move(&nothing, sizeof nothing);
  CHECK_INT(nothing, ==, -1);
  status = 99;
  tag = 54321;
  bsp_get_tag(&status, &tag);
  CHECK_INT(status, ==, -1);
  CHECK_INT(tag, ==, 54321);
  bsp_sync();
  status = 99;
  bsp_get_tag(&status, &tag);
  CHECK_INT(status, ==, -1);
  bsp_end();
}

CONFORMANCE_PROGRAM("bsmp_get_tag_empty", spmd)
