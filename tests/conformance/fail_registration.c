/* Expected failures (BSPlib 1998, DRMA): misuse of registrations and pids. One process
 * (the last) makes the bad call, chosen by --case=NAME, while the others go on to
 * bsp_sync; the job must stop with a non-zero exit and a message naming the call:
 *   put_outside          bsp_put past the end of the destination registration (bsp_put)
 *   get_outside          bsp_get past the end of the source registration (bsp_get)
 *   put_pid_range        bsp_put to pid bsp_nprocs() (bsp_put)
 *   get_pid_range        bsp_get from pid -1 (bsp_get)
 *   send_pid_range       bsp_send to pid bsp_nprocs() (bsp_send)
 *   pop_unregistered     bsp_pop_reg of an address never registered (bsp_pop_reg)
 *   push_sequence_differs  the last process registers one area more (bsp_push_reg)
 *   pop_sequence_differs   the last process pops a registration the others keep (bsp_pop_reg)
 *   put_before_effective   bsp_put into an area pushed in the same superstep (bsp_put)
 *   put_after_pop          bsp_put into an area whose pop has taken effect (bsp_put) */
#include "conformance.h"

static int area[4], extra[4], never[4], fresh[4];

static void spmd(void) {
  bsp_begin(conformance_nprocs);
  int p = bsp_nprocs(), me = bsp_pid();
  int right = (me + 1) % p;
  int last = me == p - 1;
  bsp_push_reg(area, sizeof area);
  bsp_push_reg(extra, sizeof extra);
  bsp_sync();
  int known = conformance_case_is("put_outside") || conformance_case_is("get_outside") ||
              conformance_case_is("put_pid_range") || conformance_case_is("get_pid_range") ||
              conformance_case_is("send_pid_range") || conformance_case_is("pop_unregistered") ||
              conformance_case_is("push_sequence_differs") || conformance_case_is("pop_sequence_differs") ||
              conformance_case_is("put_before_effective") || conformance_case_is("put_after_pop");
  if (!known) bsp_abort("fail_registration: unknown --case=%s\n", conformance_case ? conformance_case : "(none)");
  int value[2] = {1, 2}, got[2];
  if (conformance_case_is("put_before_effective")) {
    bsp_push_reg(fresh, sizeof fresh);
    if (last) bsp_put(right, value, fresh, 0, sizeof(int));
  }
  if (conformance_case_is("put_after_pop")) {
    bsp_pop_reg(extra);
    bsp_sync();
    if (last) bsp_put(right, value, extra, 0, sizeof(int));
  }
  if (last) {
    if (conformance_case_is("put_outside")) bsp_put(right, value, area, 3 * sizeof(int), sizeof value);
    if (conformance_case_is("get_outside")) bsp_get(right, area, 3 * sizeof(int), got, sizeof got);
    if (conformance_case_is("put_pid_range")) bsp_put(p, value, area, 0, sizeof(int));
    if (conformance_case_is("get_pid_range")) bsp_get(-1, area, 0, got, sizeof(int));
    if (conformance_case_is("send_pid_range")) bsp_send(p, NULL, value, sizeof value);
    if (conformance_case_is("pop_unregistered")) bsp_pop_reg(never);
    if (conformance_case_is("push_sequence_differs")) bsp_push_reg(never, sizeof never);
    if (conformance_case_is("pop_sequence_differs")) bsp_pop_reg(extra);
  }
  bsp_sync();
  bsp_sync();
  bsp_end();
}

CONFORMANCE_PROGRAM("fail_registration", spmd)
