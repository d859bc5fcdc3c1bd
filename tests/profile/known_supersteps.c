/* tests/profile/known_supersteps.c: a BSPlib program whose supersteps are known in advance,
 * for the profiler's tests (profile_test.cc reads the SITE markers' line numbers from this
 * file): every process, in superstep
 *   0  registers a buffer and sets the tag size to 4                         (SITE A)
 *   1  computes for 20 ms, then puts 1000 bytes to pid+1                     (SITE B)
 *   2  gets 512 bytes from pid+1 and sends 3 messages of 100 bytes to pid+1  (SITE C)
 *   3  puts 64 bytes to itself (not communication: h stays 0)                (SITE D)
 *   4  bsp_end                                                               (SITE E)
 * and checks what arrived (exit status 1 and a message if anything is wrong). */
#include <string.h>

#include "bsp.h"

static char area[4096];

static void compute_for(double seconds) {
  double until = bsp_time() + seconds;
  while (bsp_time() < until) {
  }
}

int main(void) {
  bsp_begin(bsp_nprocs());
  int p = bsp_nprocs(), me = bsp_pid(), next = (me + 1) % p;
  char out[1000], mine[64];
  memset(out, 'a' + me % 26, sizeof out);
  memset(mine, 'z', sizeof mine);
  bsp_push_reg(area, sizeof area);
  int tagsize = 4;
  bsp_set_tagsize(&tagsize);
  bsp_sync(); /* SITE A */
  compute_for(0.020);
  bsp_put(next, out, area, 0, sizeof out);
  bsp_sync(); /* SITE B */
  char fetched[512], payload[100];
  int tag = me;
  memset(payload, 'm', sizeof payload);
  bsp_get(next, area, 0, fetched, sizeof fetched);
  for (int k = 0; k < 3; ++k) bsp_send(next, &tag, payload, sizeof payload);
  bsp_sync(); /* SITE C */
  int messages = 0, bytes = 0;
  bsp_qsize(&messages, &bytes);
  char expected = (char)('a' + (me + p - 1) % p % 26), expected_next = (char)('a' + me % 26);
  if (area[0] != expected || area[999] != expected || fetched[0] != expected_next || messages != 3 || bytes != 300) {
    bsp_abort("known_supersteps: pid %d: wrong data (area %c, fetched %c, %d messages of %d bytes)\n", me, area[0],
              fetched[0], messages, bytes);
  }
  bsp_put(me, mine, area, 2000, sizeof mine);
  bsp_sync(); /* SITE D */
  bsp_end();  /* SITE E */
  return 0;
}
