/* Rule (BSPlib 1998, bsp_put / bsp_get / bsp_send): the standard sets no limit on the
 * size of one transfer: a 1 MiB put, a 1 MiB get and a 256 KiB message arrive whole and
 * in order of bytes, in one superstep. */
#include "conformance.h"

#define BIG (1 << 20)
#define MESSAGE (256 * 1024)

static unsigned char put_area[BIG], get_area[BIG], source[BIG], received[MESSAGE];

static unsigned char pattern(int pid, int i) { return (unsigned char)(pid * 31 + i * 7 + (i >> 11)); }

static void spmd(void) {
  bsp_begin(conformance_nprocs);
  int p = bsp_nprocs(), me = bsp_pid();
  int right = (me + 1) % p, left = (me + p - 1) % p;
  for (int i = 0; i < BIG; ++i) {
    source[i] = pattern(me, i);
    put_area[i] = get_area[i] = 0;
  }
  bsp_push_reg(put_area, BIG);
  bsp_push_reg(source, BIG);
  bsp_sync();
  bsp_put(right, source, put_area, 0, BIG);
  bsp_get(left, source, 0, get_area, BIG);
  bsp_send(right, NULL, source, MESSAGE);
  bsp_sync();
  for (int i = 0; i < BIG; ++i) {
    if (put_area[i] != pattern(left, i)) CHECK_INT(put_area[i], ==, pattern(left, i));
    if (get_area[i] != pattern(left, i)) CHECK_INT(get_area[i], ==, pattern(left, i));
  }
  int status = -2;
  bsp_get_tag(&status, NULL);
  CHECK_INT(status, ==, MESSAGE);
  bsp_move(received, MESSAGE);
  for (int i = 0; i < MESSAGE; ++i) {
    if (received[i] != pattern(left, i)) CHECK_INT(received[i], ==, pattern(left, i));
  }
  bsp_end();
}

CONFORMANCE_PROGRAM("large_transfers", spmd)
