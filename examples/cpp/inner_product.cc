// examples/cpp/inner_product.cc: the inner product of two vectors of length n spread
// cyclically over the processes: each sums its part, then bsp::sum adds the partial sums.
// Usage: bsprun -n 4 ./inner_product [n]   (checks against the closed form)
#include <bsp/bsp.hpp>

#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  std::size_t n = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 100000;
  return bsp::run(argc, argv, [n](bsp::world& world) {
    bsp::cyclic_partitioning part(n, world.size());
    std::vector<double> x(part.local_size(world.rank())), y(x.size());
    for (std::size_t l = 0; l < x.size(); ++l) {
      x[l] = y[l] = part.global(world.rank(), l) + 1.0;  // x = y = 1..n
    }
    double mine = 0;
    for (std::size_t l = 0; l < x.size(); ++l) mine += x[l] * y[l];
    double total = bsp::sum(world, mine);
    double m = n, expected = m * (m + 1) * (2 * m + 1) / 6;
    if (total != expected) world.abort("inner product on rank %d: %.0f, expected %.0f", world.rank(), total, expected);
    if (world.rank() == 0) {
      std::printf("inner product of 1..%zu with itself on %d processes = %.0f (correct)\n", n, world.size(), total);
    }
  });
}
