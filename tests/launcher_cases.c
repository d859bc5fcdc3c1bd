/* tests/launcher_cases.c: small programs for what a user meets first under bsprun,
 * chosen with --case=NAME (launcher_test.cc runs them):
 *   nprocs      pid 0 prints "nprocs P" (P: bsp_nprocs() in bsp_begin(bsp_nprocs()))
 *   lines       every process prints 3000 lines "pid I line K <filler> end" of 20 to 200
 *               characters with printf (stdio's full buffering when stdout is a pipe)
 *   supersteps  20 supersteps of puts around a ring (for --stats)
 *   slg         every process reads bsp_s(), bsp_l(), bsp_g() (Oxford's machine parameters);
 *               pid 0 prints "slg S L G" (%g)
 *   bad_first   the last process calls bsp_put to pid P in the first superstep, before
 *               any sync: the job must stop with that one error
 *   bad_first_slow0  the same, with pid 0 slowed down (a SIGALRM after each millisecond
 *               of running sleeps 20 ms) so the last process's error, and its exit,
 *               come while pid 0 still opens the others' shm inboxes
 *   killed_first_slow0  the last process kills itself (SIGKILL) right after bsp_begin,
 *               pid 0 slowed down as above: the job must say that process was killed */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "bsp.h"

static const char* which = "";

// After each millisecond of running, sleep 20 ms (the timer is armed again only after the
// nap, so the process still moves: about 1 ms in 21).
static void nap(int signal) {
  (void)signal;
  struct timespec pause = {0, 20 * 1000 * 1000};
  nanosleep(&pause, NULL);
  struct itimerval once = {{0, 0}, {0, 1000}};
  setitimer(ITIMER_REAL, &once, NULL);
}

static void slow_down(void) {
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = nap;
  action.sa_flags = SA_RESTART;
  sigaction(SIGALRM, &action, NULL);
  struct itimerval once = {{0, 0}, {0, 1000}};
  setitimer(ITIMER_REAL, &once, NULL);
}

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (strncmp(argv[i], "--case=", 7) == 0) which = argv[i] + 7;
  }
  const char* launched_pid = getenv("BSP_PID");
  int slowed = strcmp(which, "bad_first_slow0") == 0 || strcmp(which, "killed_first_slow0") == 0;
  if (slowed && (!launched_pid || strcmp(launched_pid, "0") == 0)) slow_down();
  bsp_begin(bsp_nprocs());
  int p = bsp_nprocs(), me = bsp_pid();
  if (strcmp(which, "nprocs") == 0) {
    if (me == 0) printf("nprocs %d\n", p);
  } else if (strcmp(which, "lines") == 0) {
    char filler[201];
    for (int k = 0; k < 3000; ++k) {
      int length = 20 + (k * 37 + me * 11) % 180;
      memset(filler, 'a' + (k + me) % 26, (size_t)length);
      filler[length] = '\0';
      printf("pid %d line %d %s end\n", me, k, filler);
    }
  } else if (strcmp(which, "supersteps") == 0) {
    int left = -1;
    bsp_push_reg(&left, sizeof left);
    bsp_sync();
    for (int round = 0; round < 20; ++round) {
      bsp_put((me + 1) % p, &me, &left, 0, sizeof me);
      bsp_sync();
    }
  } else if (strcmp(which, "slg") == 0) {
    double s = bsp_s(), l = bsp_l(), g = bsp_g();
    if (!(s > 0 && l > 0 && g > 0)) bsp_abort("launcher_cases: pid %d: s %g, l %g, g %g\n", me, s, l, g);
    if (me == 0) printf("slg %g %g %g\n", s, l, g);
  } else if (strcmp(which, "killed_first_slow0") == 0) {
    if (me == p - 1) raise(SIGKILL);
    bsp_sync();
  } else if (strcmp(which, "bad_first") == 0 || strcmp(which, "bad_first_slow0") == 0) {
    int x = 0;
    if (me == p - 1) bsp_put(p, &x, &x, 0, sizeof x);
    bsp_sync();
  } else {
    bsp_abort("launcher_cases: unknown --case=%s\n", which);
  }
  bsp_end();
  return 0;
}
