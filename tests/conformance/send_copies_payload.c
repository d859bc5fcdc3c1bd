/* Rule (BSPlib 1998, bsp_send): bsp_send copies the tag and the payload before returning;
 * the program may change or reuse them at once. */
#include "conformance.h"

#define K 10

static void spmd(void) {
  bsp_begin(conformance_nprocs);
  int p = bsp_nprocs(), me = bsp_pid();
  int right = (me + 1) % p, left = (me + p - 1) % p;
  int tag_size = sizeof(int);
  bsp_set_tagsize(&tag_size);
  bsp_sync();
  int tag, payload[2];
  for (int k = 0; k < K; ++k) {
    tag = k;
    payload[0] = me;
    payload[1] = 100 * k + me;
    bsp_send(right, &tag, payload, sizeof payload);
  }
  tag = payload[0] = payload[1] = -1;
  bsp_sync();
  int seen[K] = {0};
  for (int i = 0; i < K; ++i) {
    int status = -2, got_tag = -1, got[2] = {-1, -1};
    bsp_get_tag(&status, &got_tag);
    CHECK_INT(status, ==, (int)sizeof got);
    CHECK(got_tag >= 0 && got_tag < K);
    bsp_move(got, sizeof got);
    CHECK_INT(got[0], ==, left);
    CHECK_INT(got[1], ==, 100 * got_tag + left);
    seen[got_tag] += 1;
  }
  for (int k = 0; k < K; ++k) CHECK_INT(seen[k], ==, 1);
  bsp_end();
}

CONFORMANCE_PROGRAM("send_copies_payload", spmd)
