// bench/bsp_params.cc: the BSP parameters of this machine + transport, measured as
// BSPedupack's bspbench does (Bisseling, "Parallel Scientific Computation", ch. 1):
//   r  computing rate: DAXPY pairs (y += a*x; z -= b*x) of length n on every process,
//      r = average over the processes of 4*n*iterations / time, in flop/s;
//   g, l  from h-relations: for each h every process bsp_puts h doubles, one at a time, to
//      the p-1 others in turn, then syncs; the time of one h-relation, in flops (time * r),
//      is fitted by least squares to l + g*h over h = p .. h_max.
// Output (pid 0): a CSV block of the h-relation times, a blank line, and a CSV block with
// r (Mflop/s), g (flops per 8-byte word) and l (flops), and g and l in microseconds.
// h runs over 0..h_max (2048 by default) in steps of --h-step (default: every h up to 32,
// then every 32nd; --h-step=1 times every h as bspbench does). Each h is timed
// --iterations times; the median is used (--statistic=mean takes bspbench's mean, which
// one descheduled process on a shared machine can skew).
// Run: bsprun -n 4 --transport=tcp bazel-bin/bench/bsp_params [--h-max=2048]
//      [--iterations=10] [--h-step=32] [--statistic=median|mean] [--breakdown=1]
#include <cstdio>
#include <vector>

#include "bench/bench_flags.h"
#include "bsplib/bsp.h"
#include "bsplib/bsp_stats.h"

namespace {

// Average DAXPY rate over the processes, in flop/s (collective).
double computing_rate(long n, long iterations) {
  std::vector<double> x(n), y(n), z(n);
  for (long i = 0; i < n; ++i) x[i] = y[i] = z[i] = static_cast<double>(i);
  const double alpha = 1.0 / 3.0, beta = 4.0 / 9.0;
  double start = bsp_time();
  for (long iter = 0; iter < iterations; ++iter) {
    for (long i = 0; i < n; ++i) y[i] += alpha * x[i];
    for (long i = 0; i < n; ++i) z[i] -= beta * x[i];
    asm volatile("" : : "r"(y.data()), "r"(z.data()) : "memory");  // keep every pass
  }
  double rate = 4.0 * static_cast<double>(n) * static_cast<double>(iterations) / (bsp_time() - start);
  const int p = bsp_nprocs();
  std::vector<double> rates(p);
  bsp_push_reg(rates.data(), static_cast<int>(p * sizeof(double)));
  bsp_sync();
  bsp_put(0, &rate, rates.data(), static_cast<int>(bsp_pid() * sizeof(double)), sizeof(double));
  bsp_sync();
  double average = 0;
  for (double each : rates) average += each / p;
  bsp_pop_reg(rates.data());
  bsp_sync();
  return bsp_pid() == 0 ? average : 0;
}

// Seconds of one h-relation of single-double puts, over `iterations` runs: the mean (as
// bspbench) or the median (steadier when other work shares the machine), as pid 0 sees it.
double h_relation_seconds(long h, long iterations, bool median, std::vector<double>& source,
                          std::vector<double>& dest) {
  const int p = bsp_nprocs(), s = bsp_pid();
  std::vector<double> seconds;
  bsp_sync();
  double first = bsp_time(), start = first;
  for (long iter = 0; iter < iterations; ++iter) {
    for (long i = 0; i < h; ++i) {
      int destination = static_cast<int>((s + 1 + i % (p - 1)) % p);
      long index = s + (i / (p - 1)) * p;  // my own part of the destination's array
      bsp_put(destination, &source[i], dest.data(), static_cast<int>(index * sizeof(double)), sizeof(double));
    }
    bsp_sync();
    double end = bsp_time();
    seconds.push_back(end - start);
    start = end;
  }
  if (!median) return (start - first) / static_cast<double>(iterations);
  return bench::summarize(seconds).median;
}

// --breakdown=1: where one word of g goes on the sender, in ns per put (median of
// `iterations` runs of h puts, as the h-relation makes them): bspbench's loop alone (its
// index arithmetic, a store instead of the put), and the loop with its bsp_puts but
// without the sync; then the sync's share per word (sending, receiving, applying, and
// waiting for the other processes): two syncs after the puts (the second waits for the
// peers to have applied theirs) less two empty ones, over h. Collective; printed by pid 0 to stderr.
void breakdown(long h, long iterations, std::vector<double>& source, std::vector<double>& dest) {
  const int p = bsp_nprocs(), s = bsp_pid();
  std::vector<double> loop_ns, put_ns, sync_ns, empty_ns;
  std::vector<double> local(dest.size());
  for (long iter = 0; iter < iterations; ++iter) {
    double start = bsp_time();
    for (long i = 0; i < h; ++i) {
      int destination = static_cast<int>((s + 1 + i % (p - 1)) % p);
      long index = s + (i / (p - 1)) * p;
      local[static_cast<std::size_t>(index)] = source[i] + destination;
      asm volatile("" : : "r"(local.data()) : "memory");
    }
    double middle = bsp_time();
    for (long i = 0; i < h; ++i) {
      int destination = static_cast<int>((s + 1 + i % (p - 1)) % p);
      long index = s + (i / (p - 1)) * p;
      bsp_put(destination, &source[i], dest.data(), static_cast<int>(index * sizeof(double)), sizeof(double));
    }
    double end = bsp_time();
    bsp_sync();
    bsp_sync();  // the peers' share of the superstep (their apply) ends here for pid 0
    double synced = bsp_time();
    bsp_sync();  // the same two syncs without puts: the part that does not grow with h
    bsp_sync();
    loop_ns.push_back((middle - start) * 1e9 / static_cast<double>(h));
    put_ns.push_back((end - middle) * 1e9 / static_cast<double>(h));
    sync_ns.push_back((synced - end) * 1e9);
    empty_ns.push_back((bsp_time() - synced) * 1e9);
  }
  if (s == 0) {
    std::fprintf(stderr,
                 "breakdown,h=%ld,loop_ns_per_word=%.2f,loop_and_put_ns_per_word=%.2f,sync_ns_per_word=%.2f "
                 "(two syncs after the puts %.0f ns, two empty ones %.0f ns)\n",
                 h, bench::summarize(loop_ns).median, bench::summarize(put_ns).median,
                 (bench::summarize(sync_ns).median - bench::summarize(empty_ns).median) / static_cast<double>(h),
                 bench::summarize(sync_ns).median, bench::summarize(empty_ns).median);
  }
}

// Least-squares fit of t = l + g*h.
void fit_line(const std::vector<double>& h, const std::vector<double>& t, double* g, double* l) {
  double n = static_cast<double>(h.size()), sh = 0, st = 0, shh = 0, sht = 0;
  for (std::size_t i = 0; i < h.size(); ++i) {
    sh += h[i];
    st += t[i];
    shh += h[i] * h[i];
    sht += h[i] * t[i];
  }
  *g = (n * sht - sh * st) / (n * shh - sh * sh);
  *l = (st - *g * sh) / n;
}

}  // namespace

int main(int argc, char** argv) {
  if (bench::wants_help(argc, argv,
                        "usage: bsprun -n P --transport=T bazel-bin/bench/bsp_params [options]\n"
                        "  The BSP parameters r (Mflop/s), g (flops per 8-byte word) and l (flops), as BSPedupack's\n"
                        "  bspbench measures them; CSV of the h-relation times, then one row of r, g, l.\n"
                        "  --h-max=2048              largest h\n"
                        "  --h-step=N                step of h (default every h to 32, then every 32nd)\n"
                        "  --iterations=10           timings per h\n"
                        "  --statistic=median|mean   per-h statistic\n"
                        "  --daxpy-length=N, --daxpy-iterations=N   the computing-rate kernel\n"
                        "  --breakdown=1             also the time per phase\n")) {
    return 0;
  }
  bench::Flags flags(argc, argv);
  const long h_max = flags.number("h-max", 2048);
  const long iterations = flags.number("iterations", 10);
  const long h_step = flags.number("h-step", 32);
  const long daxpy_length = flags.number("daxpy-length", 1024);
  const long daxpy_iterations = flags.number("daxpy-iterations", 20000);
  const bool median = flags.text("statistic", "median") == "median";

  bsp_begin(bsp_nprocs());
  const int p = bsp_nprocs();
  if (p < 2) bsp_abort("bsp_params needs at least 2 processes (h-relations go to the others)\n");
  const double r = computing_rate(daxpy_length, daxpy_iterations);
  std::vector<double> source(h_max + 1), dest(2 * h_max + p);
  for (long i = 0; i <= h_max; ++i) source[i] = static_cast<double>(i);
  bsp_push_reg(dest.data(), static_cast<int>(dest.size() * sizeof(double)));
  bsp_sync();
  std::vector<double> fit_h, fit_t;
  if (bsp_pid() == 0) std::printf("transport,p,h,time_us,time_flops\n");
  for (long h = 0; h <= h_max; h += (h < 32 ? 1 : h_step)) {
    double seconds = h_relation_seconds(h, iterations, median, source, dest);
    if (bsp_pid() == 0) {
      std::printf("%s,%d,%ld,%.2f,%.0f\n", bsp::stats::transport_name().c_str(), p, h, seconds * 1e6, seconds * r);
      std::fflush(stdout);
      if (h >= p) {
        fit_h.push_back(static_cast<double>(h));
        fit_t.push_back(seconds * r);
      }
    }
  }
  if (bsp_pid() == 0) {
    double g = 0, l = 0;
    fit_line(fit_h, fit_t, &g, &l);
    std::printf("\ntransport,p,r_mflops,g_flops_per_word,l_flops,g_us_per_word,l_us,h_max,iterations\n");
    std::printf("%s,%d,%.1f,%.1f,%.0f,%.4f,%.2f,%ld,%ld\n", bsp::stats::transport_name().c_str(), p, r / 1e6, g, l,
                g / r * 1e6, l / r * 1e6, h_max, iterations);
  }
  if (flags.number("breakdown", 0) != 0) breakdown(h_max, iterations, source, dest);
  bsp_pop_reg(dest.data());
  bsp_end();
  return 0;
}
