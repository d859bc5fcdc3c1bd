// experiments/copy_alignment.cc: why bsplib/bulk_copy.h exists. Copies 8 MiB in 256 KiB pieces
// (as a large bsp_put is copied into its record stream) with the destination d bytes past
// the source modulo 4096, by glibc's memcpy and by bsp::copy_bytes; prints one CSV row per
// distance: distance,memcpy_GBps,copy_bytes_GBps (best of --repetitions). On this
// machine's AMD EPYC memcpy falls from ~35 to ~3.5 GB/s for d = 1..15.
// Run: bazel-bin/experiments/copy_alignment [--repetitions=10] [--piece=262144]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "bench/bench_flags.h"
#include "bsplib/bulk_copy.h"

int main(int argc, char** argv) {
  if (bench::wants_help(argc, argv,
                        "usage: bazel-bin/experiments/copy_alignment [--repetitions=10] [--piece=262144]\n"
                        "  memcpy against bsplib/bulk_copy.h's copy, 8 MiB in pieces, by the distance between\n"
                        "  destination and source alignment (GB/s).\n")) {
    return 0;
  }
  bench::Flags flags(argc, argv);
  const long repetitions = flags.number("repetitions", 10);
  const std::size_t piece = static_cast<std::size_t>(flags.number("piece", 256 << 10));
  const std::size_t total = 8 << 20;
  auto* source = static_cast<unsigned char*>(std::aligned_alloc(4096, total + 4096));
  auto* target = static_cast<unsigned char*>(std::aligned_alloc(4096, total + 8192));
  std::memset(source, 1, total + 4096);
  std::memset(target, 2, total + 8192);  // every page mapped before timing
  auto rate = [&](auto copy, std::size_t distance) {
    double best = 0;
    for (long rep = 0; rep < repetitions; ++rep) {
      auto start = std::chrono::steady_clock::now();
      for (std::size_t at = 0; at + piece <= total; at += piece) copy(target + distance + at, source + at, piece);
      double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      best = std::max(best, static_cast<double>(total) / seconds / 1e9);
    }
    return best;
  };
  std::printf("distance,memcpy_GBps,copy_bytes_GBps\n");
  for (std::size_t distance : {0, 1, 8, 13, 15, 16, 29, 64, 4096 + 13, 4083}) {
    double plain = rate([](void* to, const void* from, std::size_t n) { std::memcpy(to, from, n); }, distance);
    double ours = rate([](void* to, const void* from, std::size_t n) { bsp::copy_bytes(to, from, n); }, distance);
    std::printf("%zu,%.1f,%.1f\n", distance, plain, ours);
  }
  std::free(source);
  std::free(target);
  return 0;
}
