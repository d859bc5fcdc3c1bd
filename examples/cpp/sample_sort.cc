// examples/cpp/sample_sort.cc: sorts n pseudo-random numbers spread over the processes
// with bsp::sort (regular sample sort), then checks that the result is sorted across
// processes and holds every number.
// Usage: bsprun -n 4 ./sample_sort [n]
#include <bsp/bsp.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <vector>

int main(int argc, char** argv) {
  std::size_t n = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 1000000;
  return bsp::run(argc, argv, [n](bsp::world& world) {
    bsp::block_partitioning part(n, world.size());
    std::vector<std::uint64_t> data(part.local_size(world.rank()));
    std::uint64_t checksum = 0;
    for (std::size_t l = 0; l < data.size(); ++l) {
      std::uint64_t x = part.global(world.rank(), l) * 0x9E3779B97F4A7C15ull;
      x ^= x >> 29;
      data[l] = x % 1000000007;
      checksum += data[l];
    }
    double started = world.time();
    std::vector<std::uint64_t> sorted = bsp::sort(world, std::move(data));
    double seconds = world.time() - started;
    // Sorted here, and this run's first not below the previous process's last.
    bsp::var<std::uint64_t> last(world);
    if (!sorted.empty() && world.rank() + 1 < world.size()) last(world.next_rank()) = sorted.back();
    world.sync();
    bool ok = std::is_sorted(sorted.begin(), sorted.end()) && (sorted.empty() || sorted.front() >= last.value());
    std::uint64_t sum = 0;
    for (std::uint64_t x : sorted) sum += x;
    ok = bsp::fold(world, ok, [](bool a, bool b) { return a && b; });
    std::size_t count = bsp::sum(world, sorted.size());
    if (!ok || count != n || bsp::sum(world, sum) != bsp::sum(world, checksum))
      world.abort("sample_sort: wrong result");
    std::size_t most = bsp::max(world, sorted.size());
    if (world.rank() == 0) {
      std::printf("sorted %zu numbers on %d processes in %.3f s (largest part %zu, %.2f x the mean) (correct)\n", n,
                  world.size(), seconds, most, 1.0 * most * world.size() / n);
    }
  });
}
