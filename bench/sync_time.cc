// bench/sync_time.cc: the cost of a superstep. Times many bsp_sync calls with no
// communication, and with one 4-byte bsp_put to the next process, and prints the median
// and minimum per sync (pid 0). Run: bsprun -n 4 --transport=tcp bazel-bin/bench/sync_time
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench/bench_flags.h"
#include "bsplib/bsp.h"
#include "bsplib/bsp_stats.h"

namespace {

struct Timing {
  double median_us, min_us;
};

Timing time_syncs(int repetitions, bool with_put, int* target) {
  std::vector<double> samples(repetitions);
  int value = bsp_pid();
  int right = (bsp_pid() + 1) % bsp_nprocs();
  for (int warmup = 0; warmup < 100; ++warmup) bsp_sync();
  for (int i = 0; i < repetitions; ++i) {
    double start = bsp_time();
    if (with_put) bsp_put(right, &value, target, 0, sizeof value);
    bsp_sync();
    samples[i] = (bsp_time() - start) * 1e6;
  }
  std::sort(samples.begin(), samples.end());
  return {samples[repetitions / 2], samples[0]};
}

}  // namespace

int main(int argc, char** argv) {
  if (bench::wants_help(argc, argv,
                        "usage: bsprun -n P --transport=T bazel-bin/bench/sync_time [REPETITIONS=20000]\n"
                        "  The cost of a superstep: median and minimum of an empty bsp_sync and of a 4-byte\n"
                        "  bsp_put + bsp_sync, in us, over REPETITIONS supersteps.\n")) {
    return 0;
  }
  int repetitions = argc > 1 ? std::atoi(argv[1]) : 20000;
  bsp_begin(bsp_nprocs());
  int target = 0;
  bsp_push_reg(&target, sizeof target);
  bsp_sync();
  Timing empty = time_syncs(repetitions, false, &target);
  Timing put = time_syncs(repetitions, true, &target);
  if (bsp_pid() == 0) {
    std::printf("transport=%s p=%d repetitions=%d\n", bsp::stats::transport_name().c_str(), bsp_nprocs(), repetitions);
    std::printf("  bsp_sync, no communication:   median %8.2f us  min %8.2f us\n", empty.median_us, empty.min_us);
    std::printf("  4-byte bsp_put + bsp_sync:    median %8.2f us  min %8.2f us\n", put.median_us, put.min_us);
  }
  bsp_pop_reg(&target);
  bsp_end();
  return 0;
}
