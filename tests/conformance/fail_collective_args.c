/* Expected failures (BSPlib 1998 and the Oxford toolset's manual pages): collective calls
 * that processes make differently. One process (the last) differs, chosen by --case=NAME;
 * the job must stop with a non-zero exit and a message naming the call:
 *   pop_names_differ      every process pushed area then extra; the last pops extra while
 *                         the others pop area: the first pop of the superstep names
 *                         registration #1 there, #0 elsewhere (bsp_pop_reg)
 *   pop_most_recent_differs  all push area; the others then push extra and the last area
 *                         again; all pop area: on the last, area's most recent registration
 *                         is #1, elsewhere #0 (bsp_pop_reg)
 *   tagsize_some          only the last calls bsp_set_tagsize, with the size in force (0)
 *                         (bsp_set_tagsize)
 *   tagsize_some_differs  only the last calls bsp_set_tagsize, with 8 (bsp_set_tagsize) */
#include "conformance.h"

static int area[4], extra[4];

static void spmd(void) {
  bsp_begin(conformance_nprocs);
  int p = bsp_nprocs(), me = bsp_pid();
  int last = me == p - 1;
  int known = conformance_case_is("pop_names_differ") || conformance_case_is("pop_most_recent_differs") ||
              conformance_case_is("tagsize_some") || conformance_case_is("tagsize_some_differs");
  if (!known) bsp_abort("fail_collective_args: unknown --case=%s\n", conformance_case ? conformance_case : "(none)");
  if (conformance_case_is("pop_names_differ")) {
    bsp_push_reg(area, sizeof area);
    bsp_push_reg(extra, sizeof extra);
    bsp_sync();
    bsp_pop_reg(last ? (void*)extra : (void*)area);
  }
  if (conformance_case_is("pop_most_recent_differs")) {
    bsp_push_reg(area, sizeof area);
    bsp_sync();
    bsp_push_reg(last ? (void*)area : (void*)extra, sizeof area);
    bsp_sync();
    bsp_pop_reg(area);
  }
  if (conformance_case_is("tagsize_some") && last) {
    int size = 0;
    bsp_set_tagsize(&size);
  }
  if (conformance_case_is("tagsize_some_differs") && last) {
    int size = 8;
    bsp_set_tagsize(&size);
  }
  bsp_sync();
  bsp_sync();
  bsp_end();
}

CONFORMANCE_PROGRAM("fail_collective_args", spmd)
