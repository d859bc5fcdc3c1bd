// tests/launchers/pmix_cases.cc: what the launcher tests check beyond tests/bsp_cases:
// the ways of starting and ending a job that only a PMIx launcher (srun, mpirun) shows.
//   pmix_cases --case=NAME [--expect=P]   (P: bsp_nprocs() before bsp_begin must say P)
// begin_sync_end     begin, one superstep, end (start-up time)
// spmd_init          bsp_init: every rank but 0 goes straight into the SPMD function
// fewer              bsp_begin(2) of the processes launched: the others leave with 0
// more               bsp_begin(launched + 1): the job stops, naming the counts
// pid0_killed        pid 0 (it hosts the coordinator) is killed while the others sync
// abort_while_computing  the last pid aborts while pid 1 computes outside BSPlib for
//                    60 s: the launcher must stop it, not wait for it
// syncs=N            N empty supersteps; pid 0 prints the mean time of one
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "bsplib/bsp.h"

namespace {

std::string name;
int launched = 0;  // bsp_nprocs() before bsp_begin
int expected = 0;  // --expect=P

// bsp_nprocs() before bsp_begin is the number of processes the launcher started.
void check_launched() {
  if (expected > 0 && launched != expected) {
    std::fprintf(stderr, "pmix_cases %s: bsp_nprocs() before bsp_begin is %d, not %d\n", name.c_str(), launched,
                 expected);
    std::exit(3);
  }
}

void check(bool ok, const char* what) {
  if (!ok) bsp_abort("pmix_cases %s: pid %d: %s does not hold", name.c_str(), bsp_pid(), what);
}

// Every process puts its pid into the next one.
void ring() {
  int from = -1;
  int me = bsp_pid();
  bsp_push_reg(&from, sizeof from);
  bsp_sync();
  bsp_put((me + 1) % bsp_nprocs(), &me, &from, 0, sizeof me);
  bsp_sync();
  check(from == (me + bsp_nprocs() - 1) % bsp_nprocs(), "the ring's put");
  bsp_pop_reg(&from);
}

void spmd() {
  bsp_begin(bsp_nprocs());
  check(bsp_nprocs() == launched || bsp_pid() != 0, "bsp_nprocs() == launched");
  ring();
  bsp_end();
}

void syncs(int count) {
  bsp_sync();
  double start = bsp_time();
  for (int i = 0; i < count; ++i) bsp_sync();
  double seconds = bsp_time() - start;
  if (bsp_pid() == 0)
    std::printf("%d syncs on %d processes: %.2f us per sync\n", count, bsp_nprocs(), seconds / count * 1e6);
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--case=", 0) == 0) name = arg.substr(7);
    if (arg.rfind("--expect=", 0) == 0) expected = std::atoi(arg.c_str() + 9);
  }
  if (name == "spmd_init") {
    bsp_init(spmd, argc, argv);
    launched = bsp_nprocs();
    check_launched();
    spmd();  // pid 0 only: the others ran spmd from bsp_init and exited
    std::printf("case %s passed (%d processes)\n", name.c_str(), launched);
    return 0;
  }
  launched = bsp_nprocs();
  check_launched();
  if (name == "fewer") {
    bsp_begin(2);
    check(bsp_nprocs() == 2, "bsp_nprocs() == 2");
    ring();
    bsp_end();
  } else if (name == "more") {
    bsp_begin(launched + 1);  // more than the launcher started: the job must stop, saying so
    bsp_end();
  } else if (name == "begin_sync_end") {
    bsp_begin(launched);
    bsp_sync();
    bsp_end();
  } else if (name == "pid0_killed") {
    bsp_begin(launched);
    bsp_sync();
    if (bsp_pid() == 0) raise(SIGKILL);
    for (;;) bsp_sync();
  } else if (name == "abort_while_computing") {
    bsp_begin(launched);
    bsp_sync();
    if (bsp_pid() == bsp_nprocs() - 1) {
      usleep(200000);  // pid 1 is computing by now
      bsp_abort("abort while pid 1 computes");
    }
    if (bsp_pid() == 1) sleep(60);  // outside BSPlib: hears nothing until the launcher stops it
    for (;;) bsp_sync();
  } else if (name.rfind("syncs=", 0) == 0) {
    bsp_begin(launched);
    syncs(std::atoi(name.c_str() + 6));
    bsp_end();
  } else {
    std::fprintf(stderr, "unknown case '%s'\n", name.c_str());
    return 2;
  }
  std::printf("case %s passed (%d processes)\n", name.c_str(), launched);
  return 0;
}
