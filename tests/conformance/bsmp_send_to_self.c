/* Rule (BSPlib 1998, bsp_send): a process may send to itself; the message is in its own
 * queue in the next superstep, like any other. The tag and payload are copied at the call. */
#include "conformance.h"

static void spmd(void) {
  bsp_begin(conformance_nprocs);
  int me = bsp_pid();
  int tag_size = 2 * sizeof(int);
  bsp_set_tagsize(&tag_size);
  bsp_sync();
  int tag[2] = {me, -me}, payload[3] = {1, 2, 3 + me};
  bsp_send(me, tag, payload, sizeof payload);
  tag[0] = payload[0] = -99; /* copied at the call */
  int count = -1, bytes = -1;
  bsp_qsize(&count, &bytes);
  CHECK_INT(count, ==, 0);
  bsp_sync();
  bsp_qsize(&count, &bytes);
  CHECK_INT(count, ==, 1);
  CHECK_INT(bytes, ==, (int)sizeof payload);
  int status = -2, got_tag[2] = {0, 0}, got[3] = {0, 0, 0};
  bsp_get_tag(&status, got_tag);
  CHECK_INT(status, ==, (int)sizeof payload);
  CHECK_INT(got_tag[0], ==, me);
  CHECK_INT(got_tag[1], ==, -me);
  bsp_move(got, sizeof got);
  CHECK_INT(got[0], ==, 1);
  CHECK_INT(got[1], ==, 2);
  CHECK_INT(got[2], ==, 3 + me);
  bsp_end();
}

CONFORMANCE_PROGRAM("bsmp_send_to_self", spmd)
