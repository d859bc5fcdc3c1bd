/* examples/all_to_all_send.c: every process sends every other process a message with
 * bsp_send (tag = sender's pid, payload = a few numbers); in the next superstep each
 * process drains its queue with bsp_get_tag / bsp_move and checks what it got.
 * Usage: bsprun -n 4 ./all_to_all_send */
#include <stdio.h>

#include "bsp.h"

int main(void) {
  bsp_begin(bsp_nprocs());
  int p = bsp_nprocs(), s = bsp_pid();
  int tag_size = sizeof(int);
  bsp_set_tagsize(&tag_size);
  bsp_sync();

  for (int dest = 0; dest < p; ++dest) {
    int payload[3] = {s, dest, s * 100 + dest};
    bsp_send(dest, &s, payload, sizeof payload);
  }
  bsp_sync();

  int messages = 0, bytes = 0;
  bsp_qsize(&messages, &bytes);
  if (messages != p) bsp_abort("pid %d has %d messages, expected %d\n", s, messages, p);
  long checksum = 0;
  for (int i = 0; i < messages; ++i) {
    int status = 0, from = -1, payload[3];
    bsp_get_tag(&status, &from);
    bsp_move(payload, sizeof payload);
    if (status != (int)sizeof payload || payload[0] != from || payload[1] != s || payload[2] != from * 100 + s)
      bsp_abort("pid %d: bad message from %d\n", s, from);
    checksum += from;
  }
  if (checksum != (long)p * (p - 1) / 2) bsp_abort("pid %d: messages from the wrong senders\n", s);
  printf("pid %d: received %d messages (%d bytes) from every process\n", s, messages, bytes);
  bsp_end();
  return 0;
}
