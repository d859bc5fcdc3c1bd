/* Rule (BSPlib 1998, bsp_set_tagsize): collective (every process, same value, same
 * superstep); it returns the previous tag size through its argument (the default is 0)
 * and takes effect at the next bsp_sync: messages sent in the superstep of the call still
 * have the old tag size, and are received with it. */
#include "conformance.h"

static void fill(unsigned char* tag, int n, int seed) {
  for (int i = 0; i < n; ++i) tag[i] = (unsigned char)(seed + 3 * i);
}

/* Receives the one message from the left neighbour and checks its tag has tag_bytes bytes
 * of the left neighbour's pattern, and nothing beyond them was written. */
static void receive(int tag_bytes, int seed) {
  int p = bsp_nprocs(), me = bsp_pid(), left = (me + p - 1) % p;
  unsigned char tag[32];
  for (int i = 0; i < 32; ++i) tag[i] = 0x55;
  int status = -2, payload = -1;
  bsp_get_tag(&status, tag);
  CHECK_INT(status, ==, (int)sizeof(int));
  for (int i = 0; i < tag_bytes; ++i) CHECK_INT(tag[i], ==, (unsigned char)(seed + left + 3 * i));
  for (int i = tag_bytes; i < 32; ++i) CHECK_INT(tag[i], ==, 0x55);
  bsp_move(&payload, sizeof payload);
  CHECK_INT(payload, ==, left);
}

static void spmd(void) {
  bsp_begin(conformance_nprocs);
  int p = bsp_nprocs(), me = bsp_pid();
  int right = (me + 1) % p;
  unsigned char tag[32];

  int size = 8;
  bsp_set_tagsize(&size);
  CHECK_INT(size, ==, 0); /* the default */
  fill(tag, 32, 10 + me);
  bsp_send(right, tag, &me, sizeof me); /* still tag size 0 */
  bsp_sync();
  receive(0, 10);

  fill(tag, 32, 20 + me);
  bsp_send(right, tag, &me, sizeof me); /* tag size 8 */
  size = 4;
  bsp_set_tagsize(&size);
  CHECK_INT(size, ==, 8);
  bsp_sync();
  receive(8, 20);

  fill(tag, 32, 30 + me);
  bsp_send(right, tag, &me, sizeof me); /* tag size 4 */
  size = 0;
  bsp_set_tagsize(&size);
  CHECK_INT(size, ==, 4);
  bsp_sync();
  receive(4, 30);

  fill(tag, 32, 40 + me);
  bsp_send(right, tag, &me, sizeof me); /* tag size 0 again */
  bsp_sync();
  receive(0, 40);
  bsp_end();
}

CONFORMANCE_PROGRAM("bsmp_set_tagsize", spmd)
