// bench/cpp_vs_c.cc: the cost of the C++ interface against the C calls it inlines into:
// the same supersteps written both ways (bsp_put / bsp_get / bsp_send / bsp_sync against
// bsp::coarray puts and gets, bsp::queue sends, world.sync), run alternately in one job,
// and the BSP parameters g and l fitted from h-relations of each. Prints, per kernel, the
// time per superstep of each (mean of the lowest 90% of the samples), the ratio C++/C of
// those and of the minima.
// Usage: bsprun -n P --transport=T bazel-bin/bench/cpp_vs_c [--h=256 --rounds=15 --reps=40 --h-max=4096 --h-step=512]
#include <bsp/bsp.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/bench_flags.h"

namespace {

using word = std::uint64_t;

struct Kernel {
  std::string name;
  long h;
  std::vector<double> c, cpp;  // seconds per superstep, one sample per round
};

// Destination of the k-th word: spread over the other processes (itself when p = 1), and
// its index there (each word to its own place).
int destination(long k, int s, int p) { return p == 1 ? 0 : (s + 1 + static_cast<int>(k % (p - 1))) % p; }

// The time of one superstep (from the end of the previous sync on this process).
template <class F>
double time_superstep(F&& superstep) {
  double start = bsp_time();
  superstep();
  return bsp_time() - start;
}

// The mean of the lowest 90% of the samples: the shared machine's preemptions (the top
// tail) left out, both modes of a bimodal wait (a peer spinning or asleep) kept, where a
// median jumps between them.
double trimmed_mean(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  std::size_t keep = std::max<std::size_t>(1, samples.size() * 9 / 10);
  double sum = 0;
  for (std::size_t i = 0; i < keep; ++i) sum += samples[i];
  return sum / static_cast<double>(keep);
}

// The least-squares line t = l + g h through the points.
std::pair<double, double> fit(const std::vector<long>& hs, const std::vector<double>& ts) {
  double n = static_cast<double>(hs.size()), sh = 0, st = 0, shh = 0, sht = 0;
  for (std::size_t i = 0; i < hs.size(); ++i) {
    double h = static_cast<double>(hs[i]);
    sh += h, st += ts[i], shh += h * h, sht += h * ts[i];
  }
  double g = (n * sht - sh * st) / (n * shh - sh * sh);
  return {st / n - g * sh / n, g};
}

}  // namespace

int main(int argc, char** argv) {
  if (bench::wants_help(argc, argv,
                        "usage: bsprun -n P --transport=T bazel-bin/bench/cpp_vs_c [options]\n"
                        "  The C++ interface (bsp/bsp.hpp) against the C calls: the same supersteps both ways,\n"
                        "  alternately; per kernel the time per superstep of each and the ratio C++/C, and g, l.\n"
                        "  --h=256 --rounds=15 --reps=40   words per superstep, alternations, supersteps per round\n"
                        "  --h-max=4096 --h-step=512       the h-relations g and l are fitted from\n")) {
    return 0;
  }
  bench::Flags flags(argc, argv);
  const long h = flags.number("h", 256), rounds = flags.number("rounds", 15), reps = flags.number("reps", 40);
  const long h_max = flags.number("h-max", 4096), h_step = flags.number("h-step", 512);
  return bsp::run(argc, argv, [&](bsp::world& world) {
    const int p = world.size(), s = world.rank();
    const std::size_t room = static_cast<std::size_t>(h_max > h ? h_max : h);
    // C: a registered array; C++: a coarray of the same length.
    std::vector<word> c_area(room, 0), source(room), landed(room);
    for (std::size_t i = 0; i < room; ++i) source[i] = i * 7 + static_cast<word>(s);
    bsp_push_reg(c_area.data(), static_cast<int>(room * sizeof(word)));
    bsp_sync();
    bsp::coarray<word> xs(world, room);
    bsp::queue<word> q(world);

    auto c_put = [&](long n) {
      for (long k = 0; k < n; ++k) {
        bsp_put(destination(k, s, p), &source[static_cast<std::size_t>(k)], c_area.data(),
                static_cast<int>(k * static_cast<long>(sizeof(word))), sizeof(word));
      }
      bsp_sync();
    };
    auto cpp_put = [&](long n) {
      for (long k = 0; k < n; ++k)
        xs(destination(k, s, p))[static_cast<std::size_t>(k)] = source[static_cast<std::size_t>(k)];
      world.sync();
    };
    auto c_get = [&](long n) {
      for (long k = 0; k < n; ++k) {
        bsp_get(destination(k, s, p), c_area.data(), static_cast<int>(k * static_cast<long>(sizeof(word))),
                &landed[static_cast<std::size_t>(k)], sizeof(word));
      }
      bsp_sync();
    };
    auto cpp_get = [&](long n) {
      for (long k = 0; k < n; ++k)
        xs(destination(k, s, p))[static_cast<std::size_t>(k)].get_into(landed[static_cast<std::size_t>(k)]);
      world.sync();
    };
    word sum = 0;
    auto c_send = [&](long n) {
      for (long k = 0; k < n; ++k)
        bsp_send(destination(k, s, p), nullptr, &source[static_cast<std::size_t>(k)], sizeof(word));
      bsp_sync();
      int count = 0;
      bsp_qsize(&count, nullptr);
      for (int m = 0; m < count; ++m) {
        word w;
        bsp_move(&w, sizeof w);
        sum += w;
      }
    };
    auto cpp_send = [&](long n) {
      for (long k = 0; k < n; ++k) q(destination(k, s, p)).send(source[static_cast<std::size_t>(k)]);
      world.sync();
      for (word w : q) sum += w;
    };
    auto c_sync = [&](long) { bsp_sync(); };
    auto cpp_sync = [&](long) { world.sync(); };

    std::vector<Kernel> kernels = {{"sync", 0, {}, {}}, {"put", h, {}, {}}, {"get", h, {}, {}}, {"send", h, {}, {}}};
    std::vector<long> hs;
    for (long x = 0; x <= h_max; x += h_step) hs.push_back(x);
    for (long x : hs) kernels.push_back({"h-relation", x, {}, {}});
    auto one = [&](Kernel& k, bool cpp) {
      long n = k.h;
      double t = 0;
      if (k.name == "sync") t = cpp ? time_superstep([&] { cpp_sync(n); }) : time_superstep([&] { c_sync(n); });
      if (k.name == "put" || k.name == "h-relation") {
        t = cpp ? time_superstep([&] { cpp_put(n); }) : time_superstep([&] { c_put(n); });
      }
      if (k.name == "get") t = cpp ? time_superstep([&] { cpp_get(n); }) : time_superstep([&] { c_get(n); });
      if (k.name == "send") t = cpp ? time_superstep([&] { cpp_send(n); }) : time_superstep([&] { c_send(n); });
      (cpp ? k.cpp : k.c).push_back(t);
    };
    // One superstep of each, alternately (C first, then C++ first), so that the machine's
    // state (other jobs, frequency) weighs on both alike; medians of rounds x reps samples.
    for (long r = 0; r < rounds; ++r) {
      for (Kernel& k : kernels) {
        for (long i = 0; i < reps; ++i) {
          one(k, (r + i) % 2 == 1);
          one(k, (r + i) % 2 == 0);
        }
      }
    }
    if (s == 0) {
      std::printf(
          "# cpp_vs_c: p = %d, h = %ld words of 8 bytes, %ld rounds x %ld supersteps each, means of the lowest 90%%\n",
          p, h, rounds, reps);
      std::printf("%-12s %6s %12s %12s %8s %8s\n", "kernel", "h", "C us", "C++ us", "C++/C", "min");
      std::vector<double> c_fit, cpp_fit;
      for (Kernel& k : kernels) {
        double c = trimmed_mean(k.c) * 1e6, cpp = trimmed_mean(k.cpp) * 1e6;
        bench::Summary cs = bench::summarize(k.c), cpps = bench::summarize(k.cpp);
        if (k.name == "h-relation") {
          c_fit.push_back(c), cpp_fit.push_back(cpp);
          if (k.h != hs.back()) continue;  // the largest is printed: the fit's main weight
        }
        // Trimmed means, their ratio, and the ratio of the minima (the cost without
        // interference from other jobs on the machine).
        std::printf("%-12s %6ld %12.2f %12.2f %8.3f %8.3f\n", k.name.c_str(), k.h, c, cpp, cpp / c, cpps.min / cs.min);
      }
      auto [c_l, c_g] = fit(hs, c_fit);
      auto [cpp_l, cpp_g] = fit(hs, cpp_fit);
      std::printf("%-12s %6s %12.4f %12.4f %8.3f\n", "g (us/word)", "", c_g, cpp_g, cpp_g / c_g);
      std::printf("%-12s %6s %12.2f %12.2f %8.3f\n", "l (us)", "", c_l, cpp_l, cpp_l / c_l);
      std::printf("# (checksum %llu)\n", static_cast<unsigned long long>(sum % 1000));
    }
    bsp_pop_reg(c_area.data());
  });
}
