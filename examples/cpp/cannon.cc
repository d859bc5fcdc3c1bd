// examples/cpp/cannon.cc: Cannon's matrix multiplication C = A B on a q x q grid of
// processes (p = q * q), each holding one b x b block of A, B and C in bsp::coarrays.
// After the initial skew (row i of A shifted left by i, column j of B up by j), q rounds
// of: multiply the local blocks, shift A one left and B one up (whole blocks, as slices).
// Usage: bsprun -n 4 ./cannon [n]   (p a square; n a multiple of sqrt(p); checks C)
#include <bsp/bsp.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  std::size_t n = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 96;
  return bsp::run(argc, argv, [n](bsp::world& world) {
    int q = std::lround(std::sqrt(world.size()));
    if (q * q != world.size() || n % q != 0) {
      world.abort("cannon: p = %d must be a square and n = %zu a multiple of its root", world.size(), n);
    }
    bsp::cartesian_partitioning grid(n, n, q, q);
    auto [row, col] = grid.coordinates(world.rank());
    std::size_t b = n / q, bb = b * b;
    // A(i, j) = i + j, B(i, j) = i - j (global indices), so C(i, j) has a closed form.
    auto a_of = [](std::size_t i, std::size_t j) -> double { return i + j; };
    auto b_of = [](std::size_t i, std::size_t j) { return 1.0 * i - 1.0 * j; };
    bsp::coarray<double> a(world, bb), bm(world, bb);
    std::vector<double> c(bb, 0.0);
    // Skew while filling: the block (row, col) of A goes to (row, col - row), of B to
    // (row - col, col).
    std::vector<double> block(bb);
    for (std::size_t i = 0; i < b; ++i)
      for (std::size_t j = 0; j < b; ++j) {
        auto [gi, gj] = grid.global(world.rank(), i, j);
        block[i * b + j] = a_of(gi, gj);
      }
    a(grid.rank(row, (col - row + q) % q))[{0, bb}] = block;
    for (std::size_t i = 0; i < b; ++i)
      for (std::size_t j = 0; j < b; ++j) {
        auto [gi, gj] = grid.global(world.rank(), i, j);
        block[i * b + j] = b_of(gi, gj);
      }
    bm(grid.rank((row - col + q) % q, col))[{0, bb}] = block;
    world.sync();
    std::vector<double> a_here(bb), b_here(bb);
    for (int round = 0; round < q; ++round) {
      for (std::size_t i = 0; i < b; ++i)
        for (std::size_t k = 0; k < b; ++k) {
          double aik = a[i * b + k];
          for (std::size_t j = 0; j < b; ++j) c[i * b + j] += aik * bm[k * b + j];
        }
      if (round + 1 == q) break;
      // Shift: A one to the left, B one up (copies first: the puts read them at the call).
      a(grid.rank(row, (col - 1 + q) % q))[{0, bb}] = std::span<const double>(a.data(), bb);
      bm(grid.rank((row - 1 + q) % q, col))[{0, bb}] = std::span<const double>(bm.data(), bb);
      world.sync();
    }
    // C(i, j) = sum_k (i + k)(k - j) = n i (n-1)/2 ... checked element by element.
    double worst = 0;
    for (std::size_t i = 0; i < b; ++i)
      for (std::size_t j = 0; j < b; ++j) {
        auto [gi, gj] = grid.global(world.rank(), i, j);
        double expected = 0;
        for (std::size_t k = 0; k < n; ++k) expected += a_of(gi, k) * b_of(k, gj);
        worst = std::max(worst, std::fabs(c[i * b + j] - expected));
      }
    worst = bsp::max(world, worst);
    if (worst > 1e-6) world.abort("cannon: C is off by %g", worst);
    if (world.rank() == 0) std::printf("cannon: C = A B for n = %zu on a %d x %d grid (correct)\n", n, q, q);
  });
}
