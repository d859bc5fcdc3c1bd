// bench/bsp_bandwidth.cc: paper 001's Fig. 2 at the BSPlib level. Pid 0 bsp_puts `count`
// messages of `size` bytes into pid 1 (all in one superstep, or --per-superstep=N per
// superstep); then pid 1 puts one 4-byte message back and both sync. Bandwidth is the bytes
// put divided by the time from the first bsp_put to the end of that return superstep, so
// it includes every acknowledgement, retransmission and barrier message underneath. One CSV
// row per size (powers of two from 4 B to 64 KiB, and 1400 B, by default): best and median over the repetitions, in
// MB/s (10^6 bytes per second). Other processes (p > 2) only sync. Run: bsprun -n 2 --transport=tcp
// bazel-bin/bench/bsp_bandwidth [--bytes=16777216]
//      [--max-count=100000] [--per-superstep=0] [--repetitions=3] [--sizes=1400] [--via=put|hpput|get|all]
//      [--floor] [--huge]
// --floor adds a row per size for a memcpy between the same two buffers in the same run
// (via=memcpy), the floor a shared-memory transfer is held against; --huge puts the buffers
// on transparent huge pages (madvise), where shm's single copies apply.
#include <sys/mman.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <span>
#include <sstream>
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
                        "  --via=put|hpput|get  the call that moves the data; a comma-separated list, or all\n"
                        "                       (put,hpput,get), measures each in turn, one row each\n"
                        "  --floor              also a row per size (via=memcpy): pid 0 copies SIZE bytes from its\n"
                        "                       source buffer into its window (the same buffers), COUNT times per\n"
                        "                       measurement: the floor for shared-memory transports\n"
                        "  --huge               the buffers on transparent huge pages (madvise MADV_HUGEPAGE)\n"
                        "  --rewrite            pid 0 writes its source (memset) before each message, as a program\n"
                        "                       fills what it sends; the memset's time is in every row\n")) {
    return 0;
  }
  bench::Flags flags(argc, argv);
  const long bytes = flags.number("bytes", 16L << 20);          // data per measurement, at most...
  const long max_count = flags.number("max-count", 100000);     // ...and at most this many puts
  const long per_superstep = flags.number("per-superstep", 0);  // 0: all puts in one superstep
  const long repetitions = flags.number("repetitions", 3);
  // put (buffered), hpput (unbuffered: read at the sync), or get (pid 1 fetches from pid 0)
  std::string via_list = flags.text("via", "put");
  if (via_list == "all") via_list = "put,hpput,get";
  std::vector<std::string> vias;
  std::stringstream via_text(via_list);
  for (std::string via; std::getline(via_text, via, ',');) {
    if (via != "put" && via != "hpput" && via != "get") {
      std::fprintf(stderr, "bsp_bandwidth: --via must be put, hpput, get (a comma-separated list of them) or all\n");
      return 2;
    }
    vias.push_back(via);
  }
  auto present = [&](const char* name) {
    for (int i = 1; i < argc; ++i) {
      if (std::strcmp(argv[i], name) == 0) return true;
    }
    return false;
  };
  const bool floor = present("--floor");
  const bool huge = present("--huge");
  const bool rewrite = present("--rewrite");
  enum class Via { put, hpput, get, memcpy };
  const std::vector<long> sizes = flags.numbers(
      "sizes", bench::with_size(bench::powers_of_two(4, flags.number("max-size", 65536)), 1400));
  const long window_limit = 4L << 20;  // the destination area puts cycle through
  long largest = 4;
  for (long size : sizes) largest = std::max(largest, size);

  bsp_begin(bsp_nprocs());
  if (bsp_nprocs() < 2) bsp_abort("bsp_bandwidth needs at least 2 processes\n");
  const int pid = bsp_pid();
  // Both buffers page-aligned (on huge pages with --huge: advised before they are touched).
  auto buffer = [huge](std::size_t size, unsigned char fill) {
    const std::size_t align = 2u << 20;
    void* base = ::mmap(nullptr, size + align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) bsp_abort("bsp_bandwidth: mmap of %zu bytes failed\n", size);
    auto* start = reinterpret_cast<unsigned char*>((reinterpret_cast<std::uintptr_t>(base) + align - 1) & ~(align - 1));
    if (huge) ::madvise(start, size, MADV_HUGEPAGE);
    std::memset(start, fill, size);
    return std::span<unsigned char>(start, size);
  };
  std::span<unsigned char> source = buffer(static_cast<std::size_t>(largest), 0x5a);
  std::span<unsigned char> window = buffer(static_cast<std::size_t>(std::max(window_limit, largest)), 0);
  int reply = 0, reply_area = 0;
  bsp_push_reg(window.data(), static_cast<int>(window.size()));
  bsp_push_reg(&reply_area, sizeof reply_area);
  bsp_sync();
  if (pid == 0) std::printf("transport,p,size,count,per_superstep,best_MBps,median_MBps,via\n");
  std::vector<std::pair<std::string, Via>> runs;
  if (floor) runs.emplace_back("memcpy", Via::memcpy);
  for (const std::string& via : vias) {
    runs.emplace_back(via, via == "put" ? Via::put : via == "hpput" ? Via::hpput : Via::get);
  }
  for (long size : sizes)
    for (const auto& [via, how] : runs) {
      const long count = std::max(1L, std::min(max_count, bytes / size));
      const long slots = std::max(1L, static_cast<long>(window.size()) / size);
      std::vector<double> rates;
      for (long rep = -1; rep < repetitions; ++rep) {  // rep -1 warms up
        bsp_sync();                                    // start together
        double start = bsp_time();
        if (pid == (how == Via::get ? 1 : 0)) {
          for (long k = 0; k < count; ++k) {
            const int offset = static_cast<int>((k % slots) * size);
            if (rewrite) std::memset(source.data(), static_cast<int>(rep + k) & 0xff, static_cast<std::size_t>(size));
            if (how == Via::put) bsp_put(1, source.data(), window.data(), offset, static_cast<int>(size));
            if (how == Via::hpput) bsp_hpput(1, source.data(), window.data(), offset, static_cast<int>(size));
            if (how == Via::get) bsp_get(0, window.data(), offset, source.data(), static_cast<int>(size));
            if (how == Via::memcpy) std::memcpy(window.data() + offset, source.data(), static_cast<std::size_t>(size));
            if (per_superstep > 0 && (k + 1) % per_superstep == 0 && k + 1 < count) bsp_sync();
          }
        }
        if (how == Via::memcpy) {  // the floor: no communication, pid 0's clock only
          if (rep >= 0)
            rates.push_back(static_cast<double>(size) * static_cast<double>(count) / (bsp_time() - start) / 1e6);
          continue;
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
