/* Rule (BSPlib 1998, bsp_qsize): bsp_qsize gives the number of messages in the queue and
 * the sum of their payload sizes (tags are not counted); both go down as messages are
 * moved. */
#include "conformance.h"

#define K 6

static void spmd(void) {
  bsp_begin(conformance_nprocs);
  int p = bsp_nprocs(), me = bsp_pid();
  int right = (me + 1) % p;
  int tag_size = 8;
  bsp_set_tagsize(&tag_size);
  bsp_sync();
  int count = -1, bytes = -1;
  bsp_qsize(&count, &bytes);
  CHECK_INT(count, ==, 0);
  CHECK_INT(bytes, ==, 0);
  /* K messages to the right neighbour, payload sizes 0, 3, 6, ... bytes. */
  char payload[3 * K], tag[8] = {0};
  for (int i = 0; i < 3 * K; ++i) payload[i] = (char)i;
  for (int k = 0; k < K; ++k) bsp_send(right, tag, payload, 3 * k);
  bsp_sync();
  int total = 0;
  for (int k = 0; k < K; ++k) total += 3 * k;
  bsp_qsize(&count, &bytes);
  CHECK_INT(count, ==, K);
  CHECK_INT(bytes, ==, total);
  for (int k = 0; k < K; ++k) {
    int status = -2;
    char got[3 * K];
    bsp_get_tag(&status, tag);
    CHECK(status >= 0 && status % 3 == 0);
    bsp_move(got, sizeof got);
    total -= status;
    bsp_qsize(&count, &bytes);
    CHECK_INT(count, ==, K - 1 - k);
    CHECK_INT(bytes, ==, total);
  }
  CHECK_INT(total, ==, 0);
  bsp_end();
}

CONFORMANCE_PROGRAM("bsmp_qsize", spmd)
