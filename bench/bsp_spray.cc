// bench/bsp_spray.cc: paper 001's spray latency (Figs. 3 and 4) in BSP form. In one
// superstep pid 0 sends i messages of `size` bytes to pid 1 (bsp_send, or bsp_put with
// --via=put); in the next pid 1 reflects every one of them back; pid 0 reads none until
// all i are sent (that is what a superstep is) and checks that each comes back exactly
// once with its contents intact. Time from the first send to the end of the reflecting
// superstep, divided by i, is the per-message latency: at i = 1 it is a BSP round trip
// (two supersteps); for large i, the gap between successive sends once the pipes are full.
// One CSV row per (size, i), printed as soon as measured, so a run that deadlocks still
// shows the largest i it reached; a lost or damaged message stops the run with an error.
// Run: bsprun -n 2 --transport=tcp bazel-bin/bench/bsp_spray [--sizes=4,1400]
//      [--max-i=10000] [--via=send|put] [--messages=20000] [--max-repetitions=50]
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bench/bench_flags.h"
#include "bsplib/bsp.h"
#include "bsplib/bsp_stats.h"

namespace {

// The contents of message j: its index, then bytes derived from it.
void fill(unsigned char* message, long size, int j) {
  for (long b = 0; b < size; ++b) message[b] = static_cast<unsigned char>(j * 7 + b);
  if (size >= 4) std::memcpy(message, &j, sizeof j);
}
bool intact(const unsigned char* message, long size, int j) {
  std::vector<unsigned char> expected(size);
  fill(expected.data(), size, j);
  return std::memcmp(message, expected.data(), size) == 0;
}

// One spray of i messages; returns how many came back intact (i when none were lost).
long spray_send(long i, long size, std::vector<unsigned char>& message) {
  const int pid = bsp_pid();
  if (pid == 0) {
    for (int j = 0; j < i; ++j) {
      fill(message.data(), size, j);
      bsp_send(1, &j, message.data(), static_cast<int>(size));
    }
  }
  bsp_sync();
  if (pid == 1) {
    void *tag, *payload;
    int length;
    while ((length = bsp_hpmove(&tag, &payload)) >= 0) bsp_send(0, tag, payload, length);
  }
  bsp_sync();
  long back = 0;
  if (pid == 0) {
    std::vector<char> seen(i, 0);
    void *tag, *payload;
    int length, j;
    while ((length = bsp_hpmove(&tag, &payload)) >= 0) {
      std::memcpy(&j, tag, sizeof j);
      if (j >= 0 && j < i && !seen[j] && length == size && intact(static_cast<unsigned char*>(payload), size, j)) {
        seen[j] = 1;
        ++back;
      }
    }
  }
  return back;
}

long spray_put(long i, long size, std::vector<unsigned char>& out, std::vector<unsigned char>& in) {
  const int pid = bsp_pid();
  if (pid == 0) {
    for (int j = 0; j < i; ++j) {
      fill(out.data() + j * size, size, j);
      bsp_put(1, out.data() + j * size, in.data(), static_cast<int>(j * size), static_cast<int>(size));
    }
  }
  bsp_sync();
  if (pid == 1) {
    for (long j = 0; j < i; ++j) {
      bsp_put(0, in.data() + j * size, in.data(), static_cast<int>(j * size), static_cast<int>(size));
    }
  }
  bsp_sync();
  long back = 0;
  if (pid == 0) {
    for (int j = 0; j < i; ++j) back += intact(in.data() + j * size, size, j);
    std::memset(in.data(), 0, i * size);  // the next spray must bring its own data
  }
  return back;
}

}  // namespace

int main(int argc, char** argv) {
  if (bench::wants_help(argc, argv,
                        "usage: bsprun -n 2 --transport=T bazel-bin/bench/bsp_spray [options]\n"
                        "  Spray latency (paper 001 Figs. 3, 4): pid 0 sends i messages in one superstep, pid 1\n"
                        "  reflects them; one CSV row per (size, i): time per message in us.\n"
                        "  --sizes=4,1400          message sizes in bytes\n"
                        "  --max-i=10000           largest i (i runs 1, 2, 5, 10, ...)\n"
                        "  --counts=1,10,100       the i to run instead\n"
                        "  --via=send|put          bsp_send (default) or bsp_put\n"
                        "  --messages=20000        messages per (size, i) point, over repetitions\n"
                        "  --max-repetitions=50    most repetitions per point\n")) {
    return 0;
  }
  bench::Flags flags(argc, argv);
  const std::vector<long> sizes = flags.numbers("sizes", {4, 1400});
  const long max_i = flags.number("max-i", 10000);
  const std::vector<long> counts = flags.numbers("counts", bench::one_two_five(max_i));
  const std::string via = flags.text("via", "send");
  const long messages = flags.number("messages", 20000);             // messages per (size, i) ...
  const long max_repetitions = flags.number("max-repetitions", 50);  // ... in at most this many sprays
  long largest_size = 4, largest_i = 1;
  for (long size : sizes) largest_size = std::max(largest_size, size);
  for (long i : counts) largest_i = std::max(largest_i, i);

  bsp_begin(bsp_nprocs());
  if (bsp_nprocs() < 2) bsp_abort("bsp_spray needs at least 2 processes\n");
  if (via != "send" && via != "put") bsp_abort("bsp_spray: --via is send or put\n");
  const int pid = bsp_pid();
  std::vector<unsigned char> message(largest_size);
  std::vector<unsigned char> out, in;
  if (via == "put") {
    out.resize(largest_i * largest_size);
    in.resize(largest_i * largest_size);
  }
  int tag_size = sizeof(int);
  bsp_set_tagsize(&tag_size);
  bsp_push_reg(in.data(), static_cast<int>(in.size()));
  bsp_sync();
  if (pid == 0) std::printf("transport,p,via,size,i,repetitions,min_us_per_message,median_us_per_message\n");
  for (long size : sizes) {
    long reached = 0;
    for (long i : counts) {
      const long repetitions = std::max(1L, std::min(max_repetitions, messages / i));
      std::vector<double> per_message;
      for (long rep = 0; rep < repetitions; ++rep) {
        bsp_sync();  // start together
        double start = bsp_time();
        long back = via == "send" ? spray_send(i, size, message) : spray_put(i, size, out, in);
        double seconds = bsp_time() - start;
        if (pid == 0 && back != i) {
          bsp_abort("bsp_spray: size %ld i %ld: only %ld of the messages came back intact (largest i reached %ld)\n",
                    size, i, back, reached);
        }
        per_message.push_back(seconds * 1e6 / static_cast<double>(i));
      }
      reached = i;
      if (pid == 0) {
        bench::Summary time = bench::summarize(per_message);
        std::printf("%s,%d,%s,%ld,%ld,%ld,%.3f,%.3f\n", bsp::stats::transport_name().c_str(), bsp_nprocs(), via.c_str(),
                    size, i, repetitions, time.min, time.median);
        std::fflush(stdout);
      }
    }
    if (pid == 0) std::fprintf(stderr, "bsp_spray: size %ld: largest i reached %ld\n", size, reached);
  }
  bsp_pop_reg(in.data());
  bsp_end();
  return 0;
}
