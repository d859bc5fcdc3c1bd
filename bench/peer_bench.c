/* bench/peer_bench.c: the superstep and bulk figures of bench/peers.sh, written against the
 * 1998 BSPlib C interface alone (bsp_begin, bsp_sync, bsp_push_reg, bsp_put, bsp_get,
 * bsp_time), so that the same source builds against this library, MulticoreBSP for C
 * (`bspcc --compat`) and BSPonMPI (`bspcc`) and the figures compare like with like.
 *
 * Usage: peer_bench P [REPETITIONS [BULK_REPETITIONS [SECONDS]]]
 *   P                  processes (bsp_begin(P)); MPI-based libraries take it from mpirun too
 *   REPETITIONS        supersteps per latency figure (default 20000)
 *   BULK_REPETITIONS   8 MiB supersteps per bandwidth figure (default 20; 0: none)
 *   SECONDS            time budget per figure (default 2): fewer repetitions when the
 *                      library is slower, so a spinning barrier on an oversubscribed
 *                      machine still finishes
 * Prints, on pid 0, one `name median min` line per figure:
 *   empty_us       an empty bsp_sync
 *   put4_us        every process bsp_puts 4 bytes to the next one, then bsp_sync
 *   put1400_us     the same with 1400 bytes (a 1400-byte h-relation)
 *   put8mib_gbps   pid 0 bsp_puts 8 MiB to pid 1: bytes over the time of that superstep
 *                  and an empty one after it (GB/s: median, best)
 *   get8mib_gbps   pid 0 bsp_gets 8 MiB from pid 1, the same way
 * Every transfer is checked on arrival (a stamp at both ends of the data); a wrong byte
 * stops the run with bsp_abort naming the figure, the pid and the repetition.
 *
 * MulticoreBSP runs the processes as threads of one program: everything a process owns is
 * therefore local to spmd() or allocated there; the globals are read-only after main. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bsp.h"

#define BULK_BYTES (8u << 20)

static int nprocs_wanted = 2;
static int repetitions = 20000;
static int bulk_repetitions = 20;
static double budget_s = 2.0;

static int compare_doubles(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

/* How many repetitions fit in the time budget, judged from a few timed supersteps on pid 0
 * and sent to every process, so all of them run the same number of supersteps. */
static int agree_on_count(double seconds_each, int at_most, int* shared_count) {
  if (bsp_pid() == 0) {
    int count = at_most;
    if (seconds_each > 0 && budget_s / seconds_each < count) count = (int)(budget_s / seconds_each);
    if (count < 5) count = 5;
    for (int to = 0; to < bsp_nprocs(); ++to) bsp_put(to, &count, shared_count, 0, sizeof count);
  }
  bsp_sync();
  return *shared_count;
}

/* One latency figure: `bytes` from each process to the next per superstep (0: none). */
static void latency(const char* name, int bytes, char* source, char* target, int* shared_count) {
  int p = bsp_nprocs(), pid = bsp_pid();
  int right = (pid + 1) % p, left = (pid + p - 1) % p;
  double start = bsp_time();
  for (int i = 0; i < 20; ++i) bsp_sync();
  int count = agree_on_count((bsp_time() - start) / 20, repetitions, shared_count);
  double* samples = malloc(sizeof(double) * count);
  if (samples == NULL) bsp_abort("peer_bench: %s: pid %d cannot allocate %d samples\n", name, pid, count);
  for (int i = 0; i < count; ++i) {
    double begin = bsp_time();
    if (bytes > 0) {
      source[0] = (char)(i + pid);
      source[bytes - 1] = (char)(i - pid);
      bsp_put(right, source, target, 0, bytes);
    }
    bsp_sync();
    samples[i] = (bsp_time() - begin) * 1e6;
    if (bytes > 0 && (target[0] != (char)(i + left) || target[bytes - 1] != (char)(i - left)))
      bsp_abort("peer_bench: %s: pid %d got wrong data from pid %d in repetition %d (%d bytes)\n", name, pid, left, i,
                bytes);
  }
  qsort(samples, count, sizeof(double), compare_doubles);
  if (pid == 0) printf("%s %.3f %.3f\n", name, samples[count / 2], samples[0]);
  free(samples);
}

/* One bandwidth figure: pid 0 moves BULK_BYTES to (put) or from (get) pid 1 per superstep. */
static void bandwidth(const char* name, int use_get, char* mine, char* remote, int* shared_count) {
  int pid = bsp_pid();
  double start = bsp_time();
  if (pid == 0) {
    if (use_get) bsp_get(1, remote, 0, mine, BULK_BYTES);
    else bsp_put(1, mine, remote, 0, BULK_BYTES);
  }
  bsp_sync();
  int count = agree_on_count(bsp_time() - start, bulk_repetitions, shared_count);
  double* samples = malloc(sizeof(double) * count);
  if (samples == NULL) bsp_abort("peer_bench: %s: pid %d cannot allocate %d samples\n", name, pid, count);
  for (int i = 0; i < count; ++i) {
    /* The sending side stamps its bytes before the transfer's superstep (a put reads its
     * source when called, a get at the end of the superstep); the landing side checks the
     * stamp after it. A second superstep follows, so that pid 0's clock stops only when the
     * data has landed on pid 1 too (a sender may leave a superstep before its receiver). */
    char stamp = (char)(i * 7 + 1);
    if ((pid == 1 && use_get) || (pid == 0 && !use_get)) {
      char* from = use_get ? remote : mine;
      from[0] = stamp;
      from[BULK_BYTES - 1] = (char)~stamp;
    }
    double begin = bsp_time();
    if (pid == 0) {
      if (use_get) bsp_get(1, remote, 0, mine, BULK_BYTES);
      else bsp_put(1, mine, remote, 0, BULK_BYTES);
    }
    bsp_sync();
    char* landed = pid == 0 && use_get ? mine : pid == 1 && !use_get ? remote : NULL;
    if (landed != NULL && (landed[0] != stamp || landed[BULK_BYTES - 1] != (char)~stamp))
      bsp_abort("peer_bench: %s: pid %d got wrong data in repetition %d (%u bytes)\n", name, pid, i, BULK_BYTES);
    bsp_sync();
    samples[i] = BULK_BYTES / (bsp_time() - begin) / 1e9;
  }
  qsort(samples, count, sizeof(double), compare_doubles);
  if (pid == 0) printf("%s %.3f %.3f\n", name, samples[count / 2], samples[count - 1]);
  free(samples);
}

static void spmd(void) {
  bsp_begin(nprocs_wanted);
  if (bsp_nprocs() != nprocs_wanted)
    bsp_abort("peer_bench: asked for %d processes, bsp_begin gave %d\n", nprocs_wanted, bsp_nprocs());
  int shared_count = 0;
  char* source = calloc(1400, 1);
  char* target = calloc(1400, 1);
  if (source == NULL || target == NULL) bsp_abort("peer_bench: pid %d cannot allocate 2 x 1400 bytes\n", bsp_pid());
  bsp_push_reg(&shared_count, sizeof shared_count);
  bsp_push_reg(target, 1400);
  bsp_sync();
  latency("empty_us", 0, source, target, &shared_count);
  latency("put4_us", 4, source, target, &shared_count);
  latency("put1400_us", 1400, source, target, &shared_count);
  bsp_pop_reg(target);
  if (bulk_repetitions > 0 && bsp_nprocs() >= 2) {
    char* mine = malloc(BULK_BYTES);
    char* remote = malloc(BULK_BYTES);
    if (mine == NULL || remote == NULL) bsp_abort("peer_bench: pid %d cannot allocate 2 x 8 MiB\n", bsp_pid());
    memset(mine, 1, BULK_BYTES);
    memset(remote, 2, BULK_BYTES);
    bsp_push_reg(remote, BULK_BYTES);
    bsp_sync();
    bandwidth("put8mib_gbps", 0, mine, remote, &shared_count);
    bandwidth("get8mib_gbps", 1, mine, remote, &shared_count);
    bsp_pop_reg(remote);
    bsp_sync();
    free(mine);
    free(remote);
  }
  bsp_pop_reg(&shared_count);
  free(source);
  free(target);
  bsp_end();
}

static int argument(const char* text, const char* what, int at_least) {
  char* end;
  long value = strtol(text, &end, 10);
  if (*end != '\0' || value < at_least || value > 100000000) {
    fprintf(stderr, "peer_bench: %s must be a whole number >= %d, got '%s'\n", what, at_least, text);
    exit(2);
  }
  return (int)value;
}

int main(int argc, char** argv) {
  if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    puts(
        "usage: peer_bench P [REPETITIONS=20000 [BULK_REPETITIONS=20 [SECONDS=2]]]\n"
        "  Plain-BSPlib superstep and 8 MiB figures (bench/peers.sh builds it against each library);\n"
        "  prints 'name median min' (latency, us) or 'name median best' (GB/s) per figure on pid 0.");
    return 0;
  }
  /* Read before bsp_init: with the Oxford and BSPonMPI semantics the other processes run
   * spmd() from inside bsp_init and never come back to main. */
  if (argc > 1) nprocs_wanted = argument(argv[1], "P", 1);
  if (argc > 2) repetitions = argument(argv[2], "REPETITIONS", 5);
  if (argc > 3) bulk_repetitions = argument(argv[3], "BULK_REPETITIONS", 0);
  if (argc > 4) budget_s = argument(argv[4], "SECONDS", 1);
  bsp_init(spmd, argc, argv);
  spmd();
  return 0;
}
