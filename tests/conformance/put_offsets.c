/* Rule (BSPlib 1998, bsp_put): the destination is the registration named by dst, at byte
 * offset `offset` from its start: each process writes its own part of every process's
 * array, at word offsets and at unaligned byte offsets; the rest is untouched. */
#include "conformance.h"

#define MAX_PROCS 64

static int words[2 * MAX_PROCS + 2];
static unsigned char bytes[3 * MAX_PROCS + 8];

static void spmd(void) {
  bsp_begin(conformance_nprocs);
  int p = bsp_nprocs(), me = bsp_pid();
  CHECK_INT(p, <=, MAX_PROCS);
  for (int i = 0; i < 2 * MAX_PROCS + 2; ++i) words[i] = -1;
  for (int i = 0; i < 3 * MAX_PROCS + 8; ++i) bytes[i] = 0xee;
  bsp_push_reg(words, sizeof words);
  bsp_push_reg(bytes, sizeof bytes);
  bsp_sync();
  int pair[2] = {me, -me};
  unsigned char three[3] = {(unsigned char)me, (unsigned char)(me + 1), (unsigned char)(0x80 | me)};
  for (int q = 0; q < p; ++q) {
    /* words[1 + 2me], words[2 + 2me] */
    bsp_put(q, pair, words, (1 + 2 * me) * (int)sizeof(int), sizeof pair);
    /* bytes[1 + 3me .. 3 + 3me]: odd offsets */
    bsp_put(q, three, bytes, 1 + 3 * me, sizeof three);
  }
  bsp_sync();
  CHECK_INT(words[0], ==, -1);
  for (int q = 0; q < p; ++q) {
    CHECK_INT(words[1 + 2 * q], ==, q);
    CHECK_INT(words[2 + 2 * q], ==, -q);
    CHECK_INT(bytes[1 + 3 * q], ==, q);
    CHECK_INT(bytes[2 + 3 * q], ==, q + 1);
    CHECK_INT(bytes[3 + 3 * q], ==, 0x80 | q);
  }
  CHECK_INT(bytes[0], ==, 0xee);
  for (int i = 1 + 2 * p; i < 2 * MAX_PROCS + 2; ++i) CHECK_INT(words[i], ==, -1);
  for (int i = 1 + 3 * p; i < 3 * MAX_PROCS + 8; ++i) CHECK_INT(bytes[i], ==, 0xee);
  bsp_end();
}

CONFORMANCE_PROGRAM("put_offsets", spmd)
