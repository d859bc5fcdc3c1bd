// experiments/sync_scaling.cc: the cost of a superstep against the process count.
// Two kinds of superstep, each timed on pid 0 over a number of supersteps chosen so the
// kind runs about --budget-ms (at least --min-supersteps, at most --max-supersteps):
//   empty      bsp_sync with no communication
//   neighbour  every process bsp_puts one 8-byte word to pid + 1 (mod p), then bsp_sync
// For each kind it prints one CSV row: the mean time per superstep (the loop's total ÷ its
// count: what a program of many supersteps pays), the median, minimum and 90th percentile
// of the single supersteps, and the frames each process sent during the timed loop per
// superstep (bsp::stats counters read before and after the loop, so set-up, warm-up and
// the reporting supersteps are excluded), averaged over the processes, and the largest;
// and per process and superstep the CPU time it used (user + system, getrusage) and its
// context switches, voluntary (it blocked) and involuntary (preempted): with the mean,
// they tell how much of the machine's cores the job had (others' load) and where its
// time went (experiments/sync_model.py).
// Run: bsprun -n 16 --transport=udp --sync=dense bazel-bin/experiments/sync_scaling
//      [--budget-ms=2000] [--min-supersteps=20] [--max-supersteps=20000] [--warmup=20]
//      [--kinds=empty,neighbour] [--no-header]
// experiments/sync_scaling.sh runs it over transports, protocols and p, and writes the CSV.
#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/bench_flags.h"
#include "bsplib/bsp.h"
#include "bsplib/bsp_stats.h"

namespace {

// Counters reported per process (deltas over the timed loop).
enum Counter {
  kDataSent,
  kAcks,
  kNacks,
  kRetransmissions,
  kDataReceived,
  kCpuMicroseconds,  // user + system time of the process (getrusage)
  kVoluntarySwitches,
  kInvoluntarySwitches,
  kCounters
};

struct Usage {
  std::uint64_t cpu_us, voluntary, involuntary;
};
Usage usage() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto us = [](const timeval& tv) { return static_cast<std::uint64_t>(tv.tv_sec) * 1000000u + tv.tv_usec; };
  return {us(u.ru_utime) + us(u.ru_stime), static_cast<std::uint64_t>(u.ru_nvcsw),
          static_cast<std::uint64_t>(u.ru_nivcsw)};
}

struct Settings {
  long budget_ms, min_supersteps, max_supersteps, warmup;
};

std::int64_t neighbour_word = 0;  // registered: the word pid - 1 puts here

void superstep(bool neighbour) {
  if (neighbour) {
    std::int64_t value = bsp_pid();
    bsp_put((bsp_pid() + 1) % bsp_nprocs(), &value, &neighbour_word, 0, sizeof value);
  }
  bsp_sync();
}

// Pid 0's choice of count, given to every process (one extra superstep).
long agree_on_count(long count) {
  static long shared = 0;
  bsp_push_reg(&shared, sizeof shared);
  bsp_sync();
  if (bsp_pid() == 0) {
    for (int to = 1; to < bsp_nprocs(); ++to) bsp_put(to, &count, &shared, 0, sizeof count);
    shared = count;
  }
  bsp_sync();
  bsp_pop_reg(&shared);
  return shared;
}

void measure(const std::string& kind, const Settings& settings, bool header) {
  const bool neighbour = kind == "neighbour";
  const int p = bsp_nprocs();
  for (long i = 0; i < settings.warmup; ++i) superstep(neighbour);

  // Calibration: a few supersteps timed on pid 0 give the count that fills the budget.
  const int probe = 10;
  double start = bsp_time();
  for (int i = 0; i < probe; ++i) superstep(neighbour);
  double per_step = (bsp_time() - start) / probe;
  long count = static_cast<long>(settings.budget_ms * 1e-3 / std::max(per_step, 1e-7));
  count = agree_on_count(std::clamp(count, settings.min_supersteps, settings.max_supersteps));

  std::vector<double> samples(static_cast<std::size_t>(count));
  bsp::stats::Packets before = bsp::stats::packets();
  Usage used_before = usage();
  double loop_start = bsp_time();
  for (long i = 0; i < count; ++i) {
    double at = bsp_time();
    superstep(neighbour);
    samples[static_cast<std::size_t>(i)] = (bsp_time() - at) * 1e6;
  }
  double mean_us = (bsp_time() - loop_start) * 1e6 / static_cast<double>(count);
  Usage used = usage();
  bsp::stats::Packets delta = bsp::stats::packets();
  delta -= before;

  // Every process's counters to pid 0.
  std::vector<std::uint64_t> all(static_cast<std::size_t>(p) * kCounters, 0);
  bsp_push_reg(all.data(), static_cast<int>(all.size() * sizeof(std::uint64_t)));
  bsp_sync();
  std::uint64_t mine[kCounters] = {delta.data_sent,
                                   delta.explicit_acks,
                                   delta.nacks,
                                   delta.retransmissions,
                                   delta.data_received,
                                   used.cpu_us - used_before.cpu_us,
                                   used.voluntary - used_before.voluntary,
                                   used.involuntary - used_before.involuntary};
  bsp_put(0, mine, all.data(), static_cast<int>(bsp_pid() * kCounters * sizeof(std::uint64_t)), sizeof mine);
  bsp_sync();
  bsp_pop_reg(all.data());
  if (bsp_pid() != 0) return;

  double sum[kCounters] = {};
  double most_frames = 0;
  for (int pid = 0; pid < p; ++pid) {
    const std::uint64_t* row = &all[static_cast<std::size_t>(pid) * kCounters];
    for (int c = 0; c < kCounters; ++c) sum[c] += static_cast<double>(row[c]);
    most_frames = std::max(most_frames,
                           static_cast<double>(row[kDataSent] + row[kAcks] + row[kNacks] + row[kRetransmissions]));
  }
  auto per_process_step = [&](double value) { return value / p / static_cast<double>(count); };
  std::sort(samples.begin(), samples.end());
  auto quantile = [&](double q) { return samples[static_cast<std::size_t>(q * static_cast<double>(count - 1))]; };
  if (header) {
    std::printf(
        "transport,p,kind,supersteps,mean_us,median_us,min_us,p90_us,data_frames_per_proc,ack_frames_per_proc,"
        "nack_frames_per_proc,retransmissions_per_proc,frames_per_proc,max_frames_per_proc,data_received_per_proc,"
        "cpu_us_per_proc,voluntary_switches_per_proc,involuntary_switches_per_proc\n");
  }
  double frames = sum[kDataSent] + sum[kAcks] + sum[kNacks] + sum[kRetransmissions];
  std::printf("%s,%d,%s,%ld,%.2f,%.2f,%.2f,%.2f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.2f,%.3f,%.3f\n",
              bsp::stats::transport_name().c_str(), p, kind.c_str(), count, mean_us, quantile(0.5), samples.front(),
              quantile(0.9), per_process_step(sum[kDataSent]), per_process_step(sum[kAcks]),
              per_process_step(sum[kNacks]), per_process_step(sum[kRetransmissions]), per_process_step(frames),
              most_frames / static_cast<double>(count), per_process_step(sum[kDataReceived]),
              per_process_step(sum[kCpuMicroseconds]), per_process_step(sum[kVoluntarySwitches]),
              per_process_step(sum[kInvoluntarySwitches]));
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  if (bench::wants_help(
          argc, argv,
          "usage: bsprun -n P --transport=T --sync=dense|sparse bazel-bin/experiments/sync_scaling [options]\n"
          "  One superstep's cost at p: an empty bsp_sync and a one-word put to pid + 1; mean,\n"
          "  median, frames, CPU and context switches per process and superstep (CSV).\n"
          "  --budget-ms=2000 --min-supersteps=20 --max-supersteps=20000 --warmup=20\n"
          "  --kinds=empty,neighbour  --no-header\n")) {
    return 0;
  }
  bench::Flags flags(argc, argv);
  Settings settings{flags.number("budget-ms", 2000), std::max(1L, flags.number("min-supersteps", 20)),
                    flags.number("max-supersteps", 20000), flags.number("warmup", 20)};
  settings.max_supersteps = std::max(settings.max_supersteps, settings.min_supersteps);
  std::string kinds = flags.text("kinds", "empty,neighbour");
  bool header = true;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--no-header") header = false;
  }

  bsp_begin(bsp_nprocs());
  if (bsp_nprocs() < 2) bsp_abort("sync_scaling needs at least 2 processes\n");
  bsp_push_reg(&neighbour_word, sizeof neighbour_word);
  bsp_sync();
  for (const char* kind : {"empty", "neighbour"}) {
    if (kinds.find(kind) == std::string::npos) continue;
    measure(kind, settings, header);
    header = false;
  }
  bsp_pop_reg(&neighbour_word);
  bsp_end();
  return 0;
}
