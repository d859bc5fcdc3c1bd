/* Rule (BSPlib 1998, bsp_hpmove): bsp_hpmove sets pointers to the first message's tag and
 * payload in the system's buffer, removes the message from the queue and returns its
 * payload size; -1 when the queue is empty. The pointed-to data stay valid until the end
 * of the superstep (all messages can be hpmoved first and read afterwards). */
#include "conformance.h"

#define MAX_PROCS 64

static void spmd(void) {
  bsp_begin(conformance_nprocs);
  int p = bsp_nprocs(), me = bsp_pid();
  CHECK_INT(p, <=, MAX_PROCS);
  int tag_size = sizeof(int);
  bsp_set_tagsize(&tag_size);
  bsp_sync();
  void *empty_tag = (void*)&tag_size, *empty_payload = (void*)&tag_size;
  CHECK_INT(bsp_hpmove(&empty_tag, &empty_payload), ==, -1);
  /* To every process: tag = my pid, payload = (my pid + 1) ints. */
  int payload[MAX_PROCS + 1];
  for (int i = 0; i <= me; ++i) payload[i] = 1000 * me + i;
  for (int q = 0; q < p; ++q) bsp_send(q, &me, payload, (me + 1) * (int)sizeof(int));
  bsp_sync();
  void *tags[MAX_PROCS], *payloads[MAX_PROCS];
  int sizes[MAX_PROCS];
  for (int i = 0; i < p; ++i) {
    sizes[i] = bsp_hpmove(&tags[i], &payloads[i]);
    int count = -1, bytes = -1;
    bsp_qsize(&count, &bytes);
    CHECK_INT(count, ==, p - 1 - i);
  }
  CHECK_INT(bsp_hpmove(&empty_tag, &empty_payload), ==, -1);
  int seen[MAX_PROCS] = {0};
  for (int i = 0; i < p; ++i) {
    int from = *(const int*)tags[i];
    CHECK(from >= 0 && from < p);
    seen[from] += 1;
    CHECK_INT(sizes[i], ==, (from + 1) * (int)sizeof(int));
    const int* data = (const int*)payloads[i];
    for (int k = 0; k <= from; ++k) CHECK_INT(data[k], ==, 1000 * from + k);
  }
  for (int q = 0; q < p; ++q) CHECK_INT(seen[q], ==, 1);
  bsp_end();
}

CONFORMANCE_PROGRAM("bsmp_hpmove", spmd)
