/* Rule (BSPlib 1998, BSMP): the default tag size is 0; with tag size 0 messages carry no
 * tag (the tag argument is not read, NULL is fine) and may have an empty payload too:
 * such a message still counts in bsp_qsize and bsp_get_tag gives status 0 for it. */
#include "conformance.h"

static void spmd(void) {
  bsp_begin(conformance_nprocs);
  int p = bsp_nprocs(), me = bsp_pid();
  int right = (me + 1) % p, left = (me + p - 1) % p;
  bsp_send(right, NULL, &me, sizeof me);
  bsp_send(right, NULL, NULL, 0);
  char dummy_tag = 'x';
  bsp_send(right, &dummy_tag, NULL, 0);
  bsp_sync();
  int count = -1, bytes = -1;
  bsp_qsize(&count, &bytes);
  CHECK_INT(count, ==, 3);
  CHECK_INT(bytes, ==, (int)sizeof(int));
  int with_payload = 0, empty = 0;
  for (int i = 0; i < 3; ++i) {
    int status = -2;
    bsp_get_tag(&status, NULL);
    if (status == (int)sizeof(int)) {
      int got = -1;
      bsp_move(&got, sizeof got);
      CHECK_INT(got, ==, left);
      ++with_payload;
    } else {
      CHECK_INT(status, ==, 0);
      void *tag = NULL, *payload = NULL;
      CHECK_INT(bsp_hpmove(&tag, &payload), ==, 0);
      ++empty;
    }
  }
  CHECK_INT(with_payload, ==, 1);
  CHECK_INT(empty, ==, 2);
  int status = -2;
  bsp_get_tag(&status, NULL);
  CHECK_INT(status, ==, -1);
  bsp_end();
}

CONFORMANCE_PROGRAM("bsmp_tag_size_zero", spmd)
