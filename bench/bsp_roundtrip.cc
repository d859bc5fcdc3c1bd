// bench/bsp_roundtrip.cc: paper 001's Fig. 1 at the BSPlib level. Pid 0 puts `size` bytes
// into pid 1 and syncs; pid 1 puts them back and syncs: one round trip is those two
// supersteps. For every size (powers of two from 4 B to 64 KiB, and 1400 B, by default) it takes thousands of samples
// and prints one CSV row: minimum and median of the round trip, and of one superstep (a put of that size + bsp_sync,
// the number the per-layer table compares with the bare transport). Other processes (p > 2) only sync. Every sample's
// data is checked on arrival. Run: bsprun -n 2 --transport=tcp bazel-bin/bench/bsp_roundtrip [--repetitions=2000]
//      [--sizes=4,1400] [--max-size=65536]
#include <cstdio>
#include <vector>

#include "bench/bench_flags.h"
#include "bsplib/bsp.h"
#include "bsplib/bsp_stats.h"

int main(int argc, char** argv) {
  if (bench::wants_help(argc, argv,
                        "usage: bsprun -n 2 --transport=T bazel-bin/bench/bsp_roundtrip [options]\n"
                        "  BSPlib round trip (paper 001 Fig. 1): pid 0 puts SIZE bytes to pid 1, pid 1 puts them\n"
                        "  back; one CSV row per size: min and median round trip and one superstep, in us.\n"
                        "  --sizes=4,1400       sizes in bytes (default powers of two 4 B .. --max-size, and 1400)\n"
                        "  --max-size=65536     largest default size\n"
                        "  --repetitions=2000   samples per size\n"
                        "  --warmup=N           untimed round trips first\n")) {
    return 0;
  }
  bench::Flags flags(argc, argv);
  const long repetitions = flags.number("repetitions", 2000);
  const long warmup = flags.number("warmup", 100);
  const std::vector<long> sizes = flags.numbers(
      "sizes", bench::with_size(bench::powers_of_two(4, flags.number("max-size", 65536)), 1400));
  long largest = 1;
  for (long size : sizes) largest = std::max(largest, size);

  bsp_begin(bsp_nprocs());
  if (bsp_nprocs() < 2) bsp_abort("bsp_roundtrip needs at least 2 processes\n");
  const int pid = bsp_pid();
  std::vector<unsigned char> outgoing(largest), incoming(largest);
  bsp_push_reg(incoming.data(), static_cast<int>(largest));
  bsp_sync();
  if (pid == 0) {
    std::printf(
        "transport,p,size,samples,round_trip_min_us,round_trip_median_us,superstep_min_us,superstep_median_us\n");
  }
  for (long size : sizes) {
    std::vector<double> round_trips, supersteps;
    round_trips.reserve(repetitions);
    supersteps.reserve(2 * repetitions);
    for (long rep = -warmup; rep < repetitions; ++rep) {
      const auto stamp = static_cast<unsigned char>(rep);
      double start = bsp_time();
      if (pid == 0) {
        outgoing[0] = outgoing[size - 1] = stamp;
        bsp_put(1, outgoing.data(), incoming.data(), 0, static_cast<int>(size));
      }
      bsp_sync();
      double there = bsp_time();
      if (pid == 1) {
        if (incoming[0] != stamp || incoming[size - 1] != stamp) bsp_abort("bsp_roundtrip: pid 1 got wrong data\n");
        bsp_put(0, incoming.data(), incoming.data(), 0, static_cast<int>(size));
      }
      bsp_sync();
      double back = bsp_time();
      if (pid == 0 && (incoming[0] != stamp || incoming[size - 1] != stamp)) {
        bsp_abort("bsp_roundtrip: pid 0 got wrong data back\n");
      }
      if (rep >= 0) {
        round_trips.push_back((back - start) * 1e6);
        supersteps.push_back((there - start) * 1e6);
        supersteps.push_back((back - there) * 1e6);
      }
    }
    if (pid == 0) {
      bench::Summary trip = bench::summarize(round_trips), step = bench::summarize(supersteps);
      std::printf("%s,%d,%ld,%ld,%.2f,%.2f,%.2f,%.2f\n", bsp::stats::transport_name().c_str(), bsp_nprocs(), size,
                  repetitions, trip.min, trip.median, step.min, step.median);
      std::fflush(stdout);
    }
  }
  bsp_pop_reg(incoming.data());
  bsp_end();
  return 0;
}
