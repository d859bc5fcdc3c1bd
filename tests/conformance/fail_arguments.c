/* Expected failures (BSPlib 1998: arguments outside what each operation defines): the
 * last process makes one bad call (chosen by --case=NAME) while the others go on to
 * bsp_sync. The job must stop with a non-zero exit (not killed by a signal: no crash)
 * and a message naming the call and the pid. Every case but the first two has a message
 * queued, so the call has something to act on. Cases:
 *   get_tag_null_status  bsp_get_tag(NULL, tag)
 *   qsize_null           bsp_qsize(NULL, &bytes)
 *   move_null            bsp_move(NULL, 8)
 *   move_negative        bsp_move(buffer, -1)
 *   tagsize_negative     bsp_set_tagsize(&size) with size -1
 *   tagsize_huge         bsp_set_tagsize(&size) with size 1 << 30
 *   tagsize_null         bsp_set_tagsize(NULL)
 *   put_null_source      bsp_put(pid, NULL, area, 0, 4)
 *   get_null_destination bsp_get(pid, area, 0, NULL, 4)
 *   send_null_payload    bsp_send(pid, NULL, NULL, 4)
 * The tag-size cases are collective: every process makes the same bad call. */
#include "conformance.h"

static int area[4];

static void spmd(void) {
  bsp_begin(conformance_nprocs);
  int p = bsp_nprocs(), me = bsp_pid();
  int right = (me + 1) % p;
  int last = me == p - 1;
  bsp_push_reg(area, sizeof area);
  int payload = me;
  bsp_send(right, NULL, &payload, sizeof payload);
  bsp_sync();
  int known = conformance_case_is("get_tag_null_status") || conformance_case_is("qsize_null") ||
              conformance_case_is("move_null") || conformance_case_is("move_negative") ||
              conformance_case_is("tagsize_negative") || conformance_case_is("tagsize_huge") ||
              conformance_case_is("tagsize_null") || conformance_case_is("put_null_source") ||
              conformance_case_is("get_null_destination") || conformance_case_is("send_null_payload");
  if (!known) bsp_abort("fail_arguments: unknown --case=%s\n", conformance_case ? conformance_case : "(none)");
  if (conformance_case_is("tagsize_negative")) {
    int size = -1;
    bsp_set_tagsize(&size);
  } else if (conformance_case_is("tagsize_huge")) {
    int size = 1 << 30;
    bsp_set_tagsize(&size);
  } else if (conformance_case_is("tagsize_null")) {
    bsp_set_tagsize(NULL);
  } else if (last) {
    char tag[8];
    int bytes = 0, buffer[4];
    if (conformance_case_is("get_tag_null_status")) bsp_get_tag(NULL, tag);
    if (conformance_case_is("qsize_null")) bsp_qsize(NULL, &bytes);
    if (conformance_case_is("move_null")) bsp_move(NULL, 8);
    if (conformance_case_is("move_negative")) bsp_move(buffer, -1);
    if (conformance_case_is("put_null_source")) bsp_put(right, NULL, area, 0, 4);
    if (conformance_case_is("get_null_destination")) bsp_get(right, area, 0, NULL, 4);
    if (conformance_case_is("send_null_payload")) bsp_send(right, NULL, NULL, 4);
  }
  bsp_sync();
  /* The tag size cases: a message sent with the new tag size. */
  char tag[64] = {0};
  bsp_send(right, tag, &payload, sizeof payload);
  bsp_sync();
  bsp_end();
}

CONFORMANCE_PROGRAM("fail_arguments", spmd)
