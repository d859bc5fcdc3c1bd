/* Rule (BSPlib 1998, DRMA and BSMP): transfers of zero bytes are legal and change nothing:
 * bsp_put, bsp_hpput, bsp_get, bsp_hpget of 0 bytes (also at the end of a registration,
 * into a registration of size 0, and with NULL as the unused local buffer), bsp_send of an
 * empty payload (NULL), bsp_move of 0 bytes (into NULL). */
#include "conformance.h"

static int area[4], empty_area[1];

static void spmd(void) {
  bsp_begin(conformance_nprocs);
  int p = bsp_nprocs(), me = bsp_pid();
  int right = (me + 1) % p;
  for (int i = 0; i < 4; ++i) area[i] = 10 + i;
  empty_area[0] = -3;
  bsp_push_reg(area, sizeof area);
  bsp_push_reg(empty_area, 0);
  bsp_sync();
  int local = 77, got = 88;
  bsp_put(right, &local, area, 0, 0);
  bsp_put(right, &local, area, sizeof area, 0);
  bsp_put(right, &local, empty_area, 0, 0);
  bsp_put(right, NULL, area, 0, 0);
  bsp_hpput(right, &local, area, 4, 0);
  bsp_get(right, area, 0, &got, 0);
  bsp_get(right, area, sizeof area, &got, 0);
  bsp_get(right, empty_area, 0, &got, 0);
  bsp_get(right, area, 0, NULL, 0);
  bsp_hpget(right, area, 8, &got, 0);
  bsp_send(right, NULL, NULL, 0);
  bsp_sync();
  for (int i = 0; i < 4; ++i) CHECK_INT(area[i], ==, 10 + i);
  CHECK_INT(empty_area[0], ==, -3);
  CHECK_INT(local, ==, 77);
  CHECK_INT(got, ==, 88);
  int count = -1, bytes = -1;
  bsp_qsize(&count, &bytes);
  CHECK_INT(count, ==, 1);
  CHECK_INT(bytes, ==, 0);
  bsp_move(NULL, 0);
  bsp_qsize(&count, &bytes);
  CHECK_INT(count, ==, 0);
  bsp_end();
}

CONFORMANCE_PROGRAM("zero_length", spmd)
