// bench/sync_time.cc: the cost of a superstep. Times many bsp_sync calls with no
// communication, and with one 4-byte bsp_put to the next process, and prints the median,
// the 10th percentile and the minimum per sync (pid 0). On a machine other jobs load the
// median measures the scheduler (a peer descheduled mid-superstep); the 10th percentile
// is the superstep when both ran. Run: bsprun -n 4 --transport=tcp bazel-bin/bench/sync_time
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "bench/bench_flags.h"
#include "bsplib/bsp.h"
#include "bsplib/bsp_stats.h"

namespace {

struct Timing {
  double median_us, p10_us, min_us;
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
  return {samples[repetitions / 2], samples[repetitions / 10], samples[0]};
}

void print(const char* what, const Timing& t) {
  std::printf("  %-30s median %8.2f us  min %8.2f us  p10 %8.2f us\n", what, t.median_us, t.min_us, t.p10_us);
}

}  // namespace

int main(int argc, char** argv) {
  if (bench::wants_help(argc, argv,
                        "usage: bsprun -n P --transport=T bazel-bin/bench/sync_time [REPETITIONS=20000] [empty]\n"
                        "  The cost of a superstep: median, minimum and 10th percentile of an empty bsp_sync\n"
                        "  and of a 4-byte bsp_put + bsp_sync, in us, over REPETITIONS supersteps ('empty':\n"
                        "  the empty superstep only).\n")) {
    return 0;
  }
  int repetitions = std::max(10, argc > 1 ? std::atoi(argv[1]) : 20000);
  bool empty_only = argc > 2 && std::strcmp(argv[2], "empty") == 0;
  bsp_begin(bsp_nprocs());
  int target = 0;
  bsp_push_reg(&target, sizeof target);
  bsp_sync();
  Timing empty = time_syncs(repetitions, false, &target);
  Timing put{};
  if (!empty_only) put = time_syncs(repetitions, true, &target);
  if (bsp_pid() == 0) {
    std::printf("transport=%s p=%d repetitions=%d\n", bsp::stats::transport_name().c_str(), bsp_nprocs(), repetitions);
    print("bsp_sync, no communication:", empty);
    if (!empty_only) print("4-byte bsp_put + bsp_sync:", put);
  }
  bsp_pop_reg(&target);
  bsp_end();
  return 0;
}
