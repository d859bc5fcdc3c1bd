/* examples/every_primitive.c: an ordinary BSPlib 1998 C program that uses every primitive
 * of the standard and checks the result of each: bsp_init/begin/end, pid/nprocs/time,
 * push_reg/pop_reg, put/get, hpput/hpget, set_tagsize/send/qsize/get_tag/move/hpmove,
 * sync and abort (on a failed check). Pid 0 reads a number from standard input first.
 * Usage: echo 7 | bsprun -n 4 ./every_primitive */
#include <stdio.h>
#include <string.h>

#include "bsp.h"

static int seed = 1;

#define EXPECT(cond)                                                                            \
  do {                                                                                          \
    if (!(cond)) bsp_abort("pid %d: check failed: %s (line %d)\n", bsp_pid(), #cond, __LINE__); \
  } while (0)

static void spmd(void) {
  bsp_begin(bsp_nprocs());
  int p = bsp_nprocs(), s = bsp_pid(), right = (s + 1) % p, left = (s + p - 1) % p;
  double start = bsp_time();

  /* Share pid 0's input with everyone (put, registration). */
  int shared = seed;
  bsp_push_reg(&shared, sizeof shared);
  bsp_sync();
  if (s == 0)
    for (int t = 1; t < p; ++t) bsp_put(t, &shared, &shared, 0, sizeof shared);
  bsp_sync();
  EXPECT(s != 0 || shared == seed); /* the others had no input: they got it by put */

  /* get reads before the superstep's puts land; hpput/hpget unbuffered. */
  int cell = 10 * s, before = -1, fresh = 1000 + s;
  bsp_push_reg(&cell, sizeof cell);
  bsp_sync();
  bsp_get(right, &cell, 0, &before, sizeof before);
  bsp_put(right, &fresh, &cell, 0, sizeof fresh);
  bsp_sync();
  EXPECT(before == 10 * right);
  EXPECT(cell == 1000 + left);
  int via_hp = -1, hp_source = 2000 + s;
  bsp_hpput(right, &hp_source, &cell, 0, sizeof hp_source);
  bsp_sync();
  EXPECT(cell == 2000 + left);
  bsp_hpget(right, &cell, 0, &via_hp, sizeof via_hp);
  bsp_sync();
  EXPECT(via_hp == 2000 + s);
  bsp_pop_reg(&cell);
  bsp_pop_reg(&shared);

  /* BSMP with a 2-byte tag, then tag size back to 0. */
  int tag_bytes = 2;
  bsp_set_tagsize(&tag_bytes);
  EXPECT(tag_bytes == 0);
  bsp_sync();
  short tag = (short)(s + shared);
  char text[32];
  snprintf(text, sizeof text, "hello from %d", s);
  bsp_send(right, &tag, text, (int)strlen(text) + 1);
  bsp_send(right, &tag, NULL, 0);
  bsp_sync();
  int count = 0, total = 0;
  bsp_qsize(&count, &total);
  EXPECT(count == 2);
  int status = 0;
  short got_tag = 0;
  for (int i = 0; i < 2; ++i) {
    bsp_get_tag(&status, &got_tag);
    EXPECT(got_tag == (short)(left + shared));
    if (status > 0) {
      char buffer[32];
      bsp_move(buffer, sizeof buffer);
      char expected[32];
      snprintf(expected, sizeof expected, "hello from %d", left);
      EXPECT(strcmp(buffer, expected) == 0);
    } else {
      void *tag_ptr, *payload_ptr;
      EXPECT(bsp_hpmove(&tag_ptr, &payload_ptr) == 0);
      EXPECT(*(short*)tag_ptr == (short)(left + shared));
    }
  }
  bsp_get_tag(&status, &got_tag);
  EXPECT(status == -1);
  int zero = 0;
  bsp_set_tagsize(&zero);
  bsp_sync();
  EXPECT(bsp_time() >= start);
  if (s == 0) printf("every primitive behaved as the standard says on %d processes\n", p);
  bsp_end();
}

int main(int argc, char** argv) {
  bsp_init(spmd, argc, argv);
  if (scanf("%d", &seed) != 1) seed = 1; /* pid 0 only: the others run spmd directly */
  spmd();
  return 0;
}
