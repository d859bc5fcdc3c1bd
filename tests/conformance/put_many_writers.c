/* Rule (BSPlib 1998, bsp_put / bsp_sync): when several processes put into the same word in
 * one superstep, the word ends up holding exactly one of the values put (which one is not
 * specified), never a mixture of their bytes; disjoint parts written by different
 * processes all arrive. */
#include "conformance.h"

#define MAX_PROCS 64

static long long shared_word;
static int parts[MAX_PROCS];

static void spmd(void) {
  bsp_begin(conformance_nprocs);
  int p = bsp_nprocs(), me = bsp_pid();
  CHECK_INT(p, <=, MAX_PROCS);
  bsp_push_reg(&shared_word, sizeof shared_word);
  bsp_push_reg(parts, sizeof parts);
  bsp_sync();
  for (int round = 0; round < 10; ++round) {
    shared_word = -1;
    for (int i = 0; i < MAX_PROCS; ++i) parts[i] = -1;
    bsp_sync();
    /* Every process writes the same word and its own part of every process. */
    long long value = 0x0101010101010101LL * (long long)(me + 1) + round;
    int target = round % p;
    bsp_put(target, &value, &shared_word, 0, sizeof value);
    int part = 1000 * me + round;
    for (int q = 0; q < p; ++q) bsp_put(q, &part, parts, me * (int)sizeof(int), sizeof part);
    bsp_sync();
    if (me == target) {
      int matches = 0;
      for (int q = 0; q < p; ++q) matches += shared_word == 0x0101010101010101LL * (long long)(q + 1) + round;
      CHECK_INT(matches, ==, 1);
    } else {
      CHECK_INT(shared_word, ==, -1);
    }
    for (int q = 0; q < p; ++q) CHECK_INT(parts[q], ==, 1000 * q + round);
  }
  bsp_end();
}

CONFORMANCE_PROGRAM("put_many_writers", spmd)
