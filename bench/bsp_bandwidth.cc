// bench/bsp_bandwidth.cc: paper 001's Fig. 2 at the BSPlib level. Pid 0 bsp_puts `count`
// messages of `size` bytes into pid 1 (all in one superstep, or --per-superstep=N per
// superstep); then pid 1 puts one 4-byte message back and both sync. Bandwidth is the bytes
// put divided by the time from the first bsp_put to the end of that return superstep, so
// it includes every acknowledgement, retransmission and barrier message underneath. One CSV
// row per size (powers of two from 4 B to 64 KiB, and 1400 B, by default): best and median over the repetitions, in
// MB/s (10^6 bytes per second). Other processes (p > 2) only sync. Run: bsprun -n 2 --transport=tcp
// bazel-bin/bench/bsp_bandwidth [--bytes=16777216]
//      [--max-count=100000] [--per-superstep=0] [--repetitions=3] [--sizes=1400] [--via=put|hpput|get]
#include <cstdio>
#include <vector>

#include "bench/bench_flags.h"
#include "bsplib/bsp.h"
#include "bsplib/bsp_stats.h"

int main(int argc, char** argv) {
  if (bench::wants_help(argc, argv,
                        "usage: bsprun -n 2 --transport=T bazel-bin/bench/bsp_bandwidth [options]\n"
                        "  BSPlib bandwidth (paper 001 Fig. 2): pid 0 puts COUNT messages of SIZE bytes to pid 1,\n"
                        "  then one return superstep; one CSV row per size: best and median MB/s (10^6 B/s).\n"
                        "  --sizes=1400         sizes in bytes (default powers of two 4 B .. --max-size, and 1400)\n"
                        "  --max-size=65536     largest default size\n"
                        "  --bytes=16777216     bytes put per measurement (COUNT = bytes / size, at most --max-count)\n"
                        "  --max-count=100000   most messages per measurement\n"
                        "  --per-superstep=0    messages per superstep (0: all in one)\n"
                        "  --repetitions=3      measurements per size\n"
                        "  --via=put|hpput|get  the call that moves the data\n")) {
    return 0;
  }
  bench::Flags flags(argc, argv);
  const long bytes = flags.number("bytes", 16L << 20);          // data per measurement, at most...
  const long max_count = flags.number("max-count", 100000);     // ...and at most this many puts
  const long per_superstep = flags.number("per-superstep", 0);  // 0: all puts in one superstep
  const long repetitions = flags.number("repetitions", 3);
  // put (buffered), hpput (unbuffered: read at the sync), or get (pid 1 fetches from pid 0)
  const std::string via = flags.text("via", "put");
  if (via != "put" && via != "hpput" && via != "get") {
    std::fprintf(stderr, "bsp_bandwidth: --via must be put, hpput or get\n");
    return 2;
  }
  enum class Via { put, hpput, get };
  const Via how = via == "put" ? Via::put : via == "hpput" ? Via::hpput : Via::get;  // not a string compare per put
  const std::vector<long> sizes = flags.numbers(
      "sizes", bench::with_size(bench::powers_of_two(4, flags.number("max-size", 65536)), 1400));
  const long window_limit = 4L << 20;  // the destination area puts cycle through
  long largest = 4;
  for (long size : sizes) largest = std::max(largest, size);

  bsp_begin(bsp_nprocs());
  if (bsp_nprocs() < 2) bsp_abort("bsp_bandwidth needs at least 2 processes\n");
  const int pid = bsp_pid();
  std::vector<unsigned char> source(largest, 0x5a);
  std::vector<unsigned char> window(std::max(window_limit, largest));
  int reply = 0, reply_area = 0;
  bsp_push_reg(window.data(), static_cast<int>(window.size()));
  bsp_push_reg(&reply_area, sizeof reply_area);
  bsp_sync();
  if (pid == 0) std::printf("transport,p,size,count,per_superstep,best_MBps,median_MBps,via\n");
  for (long size : sizes) {
    const long count = std::max(1L, std::min(max_count, bytes / size));
    const long slots = std::max(1L, static_cast<long>(window.size()) / size);
    std::vector<double> rates;
    for (long rep = -1; rep < repetitions; ++rep) {  // rep -1 warms up
      bsp_sync();                                    // start together
      double start = bsp_time();
      if (pid == (how == Via::get ? 1 : 0)) {
        for (long k = 0; k < count; ++k) {
          const int offset = static_cast<int>((k % slots) * size);
          if (how == Via::put) bsp_put(1, source.data(), window.data(), offset, static_cast<int>(size));
          if (how == Via::hpput) bsp_hpput(1, source.data(), window.data(), offset, static_cast<int>(size));
          if (how == Via::get) bsp_get(0, window.data(), offset, source.data(), static_cast<int>(size));
          if (per_superstep > 0 && (k + 1) % per_superstep == 0 && k + 1 < count) bsp_sync();
        }
      }
      if (pid != (how == Via::get ? 1 : 0) && per_superstep > 0) {  // match the intermediate supersteps
        for (long k = per_superstep; k < count; k += per_superstep) bsp_sync();
      }
      bsp_sync();  // the last puts land
      reply = static_cast<int>(rep) + 2;
      if (pid == 1) bsp_put(0, &reply, &reply_area, 0, sizeof reply);
      bsp_sync();  // the small return packet
      double seconds = bsp_time() - start;
      if (pid == 0 && reply_area != reply) bsp_abort("bsp_bandwidth: the return message did not arrive\n");
      if (rep >= 0) rates.push_back(static_cast<double>(size) * static_cast<double>(count) / seconds / 1e6);
    }
    if (pid == 0) {
      bench::Summary rate = bench::summarize(rates);
      std::printf("%s,%d,%ld,%ld,%ld,%.2f,%.2f,%s\n", bsp::stats::transport_name().c_str(), bsp_nprocs(), size, count,
                  per_superstep, rates.back(), rate.median, via.c_str());
      std::fflush(stdout);
    }
  }
  bsp_pop_reg(&reply_area);
  bsp_pop_reg(window.data());
  bsp_end();
  return 0;
}
