/* Rule (BSPlib 1998, bsp_move): bsp_move copies the first message's payload into the
 * buffer, at most reception_nbytes of it (the rest of the buffer is untouched), and
 * removes the message from the queue, whether or not all of it was copied. */
#include "conformance.h"

static void spmd(void) {
  bsp_begin(conformance_nprocs);
  int p = bsp_nprocs(), me = bsp_pid();
  int right = (me + 1) % p, left = (me + p - 1) % p;
  unsigned char payload[16];
  for (int i = 0; i < 16; ++i) payload[i] = (unsigned char)(16 * me + i);
  /* Two messages of 16 bytes (tag size 0). */
  bsp_send(right, NULL, payload, sizeof payload);
  bsp_send(right, NULL, payload, sizeof payload);
  bsp_sync();
  unsigned char got[32];
  for (int i = 0; i < 32; ++i) got[i] = 0xaa;
  bsp_move(got, 8); /* only 8 of the 16 bytes */
  for (int i = 0; i < 8; ++i) CHECK_INT(got[i], ==, (unsigned char)(16 * left + i));
  for (int i = 8; i < 32; ++i) CHECK_INT(got[i], ==, 0xaa);
  int count = -1, bytes = -1;
  bsp_qsize(&count, &bytes);
  CHECK_INT(count, ==, 1);
  CHECK_INT(bytes, ==, 16);
  bsp_move(got, sizeof got); /* a larger buffer: the 16 bytes, the rest untouched */
  for (int i = 0; i < 16; ++i) CHECK_INT(got[i], ==, (unsigned char)(16 * left + i));
  for (int i = 16; i < 32; ++i) CHECK_INT(got[i], ==, 0xaa);
  bsp_qsize(&count, &bytes);
  CHECK_INT(count, ==, 0);
  CHECK_INT(bytes, ==, 0);
  int status = 0;
  bsp_get_tag(&status, NULL);
  CHECK_INT(status, ==, -1);
  bsp_end();
}

CONFORMANCE_PROGRAM("bsmp_move", spmd)
