// tests/cpp/cpp_cases.cc: the C++ interface (bsp/bsp.hpp) exercised in one job, run by
// cpp_test under bsprun over every transport: `cpp_cases --case=features` checks every
// feature and prints "cpp features passed on P processes"; the other cases are misuses
// that must stop the job with the C library's style of error.
#include <bsp/bsp.hpp>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

namespace {

#define EXPECT(condition)                                                                                     \
  do {                                                                                                        \
    if (!(condition)) bsp_abort("cpp_cases: rank %d: %s failed at line %d", bsp_pid(), #condition, __LINE__); \
  } while (0)

struct point {
  int x;
  double y;
};

void world_basics(bsp::world& world) {
  int p = world.size(), s = world.rank();
  EXPECT(p == bsp_nprocs() && s == bsp_pid());
  EXPECT(world.next_rank() == (s + 1) % p);
  EXPECT(world.prev_rank() == (s + p - 1) % p);
  double t0 = world.time();
  long before = world.superstep();
  world.sync();
  EXPECT(world.superstep() == before + 1);
  EXPECT(world.time() >= t0);
}

void vars(bsp::world& world) {
  int p = world.size(), s = world.rank();
  bsp::var<int> x(world, -1);
  EXPECT(x.value() == -1);
  x(world.next_rank()) = s;
  world.sync();
  EXPECT(x.value() == world.prev_rank());
  x = 100 + s;
  EXPECT(int{x} == 100 + s);
  auto f = x(world.next_rank()).get();
  world.sync();
  EXPECT(f.value() == 100 + world.next_rank());
  // A struct, and a get and a put into one variable in one superstep: the get reads the
  // value before the superstep's puts land.
  bsp::var<point> pt(world, point{s, s * 0.5});
  auto before = pt(world.next_rank()).get();
  pt(world.next_rank()) = point{-s, -1.0};
  world.sync();
  EXPECT(before.value().x == world.next_rank() && before.value().y == world.next_rank() * 0.5);
  EXPECT(pt.value().x == -world.prev_rank() && pt.value().y == -1.0);
  // broadcast from the last rank
  bsp::var<long> b(world);
  if (s == p - 1) b.broadcast(42);
  world.sync();
  EXPECT(b.value() == 42);
}

void coarrays(bsp::world& world) {
  int p = world.size(), s = world.rank();
  // lengths differ between ranks: rank s holds 10 + s elements
  bsp::coarray<int> xs(world, static_cast<std::size_t>(10 + s));
  EXPECT(xs.size() == static_cast<std::size_t>(10 + s));
  for (std::size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<int>(i);
  world.sync();
  int t = world.next_rank();
  std::size_t last = static_cast<std::size_t>(10 + t - 1);  // the last element of t's array
  xs(t)[last] = 1000 + s;
  std::vector<int> three = {7, 8, 9};
  xs(t)[{2, 5}] = three;
  std::array<int, 2> two = {-1, -2};
  xs(t)[{0, 2}] = std::span<const int>(two);
  world.sync();
  EXPECT(xs[xs.size() - 1] == 1000 + world.prev_rank());
  EXPECT(xs[0] == -1 && xs[1] == -2 && xs[2] == 7 && xs[3] == 8 && xs[4] == 9 && xs[5] == 5);
  auto one = xs(t)[last].get();
  auto run = xs(t)[{2, 6}].get();
  world.sync();
  EXPECT(one.value() == 1000 + s);
  EXPECT((run.value() == std::vector<int>{7, 8, 9, 5}));
  int sum = std::accumulate(xs.begin(), xs.end(), 0);
  EXPECT(sum == -3 + 7 + 8 + 9 + 1000 + world.prev_rank() + [&] {
    int rest = 0;
    for (int i = 5; i < 10 + s - 1; ++i) rest += i;
    return rest;
  }());
  // Gets into the caller's memory, and an unbuffered slice put (read during the sync).
  int into = 0;
  std::vector<int> room(3);
  xs(t)[last].get_into(into);
  xs(t)[{2, 5}].get_into(room);
  std::vector<int> unbuffered = {40 + s, 50 + s};
  xs(t)[{5, 7}].put_unbuffered(unbuffered);
  world.sync();
  EXPECT(into == 1000 + s);
  EXPECT((room == std::vector<int>{7, 8, 9}));
  EXPECT(xs[5] == 40 + world.prev_rank() && xs[6] == 50 + world.prev_rank());
  (void)p;
}

void queues(bsp::world& world) {
  int p = world.size(), s = world.rank();
  // Two queues and the C BSMP queue, all in one superstep, with a tag size set for C.
  bsp::queue<int, double> numbers(world);
  bsp::queue<std::string, std::vector<int>, char> texts(world);
  int tagsize = 4;
  bsp_set_tagsize(&tagsize);
  world.sync();
  for (int t = 0; t < p; ++t) {
    numbers(t).send(s, s + 0.25);
    numbers(t).send(-s, 1.5);
    std::vector<int> v(static_cast<std::size_t>(s), t);
    texts(t).send("from " + std::to_string(s), v, 'z');
    int tag = 77;
    bsp_send(t, &tag, &s, sizeof s);
  }
  world.sync();
  EXPECT(numbers.size() == static_cast<std::size_t>(2 * p));
  std::vector<int> seen(static_cast<std::size_t>(p), 0);
  for (auto [i, d] : numbers) {
    if (i >= 0 && d == i + 0.25) {
      seen[static_cast<std::size_t>(i)] |= 1;
    } else {
      EXPECT(d == 1.5 && -i >= 0 && -i < p);
      seen[static_cast<std::size_t>(-i)] |= 2;
    }
  }
  for (int r : seen) EXPECT(r == 3);
  EXPECT(texts.size() == static_cast<std::size_t>(p));
  for (const auto& [text, v, c] : texts) {
    int from = std::atoi(text.c_str() + 5);
    EXPECT(text == "from " + std::to_string(from) && c == 'z');
    EXPECT(v.size() == static_cast<std::size_t>(from));
    for (int e : v) EXPECT(e == s);
  }
  // the C queue got its own messages only
  int n = 0, bytes = 0;
  bsp_qsize(&n, &bytes);
  EXPECT(n == p && bytes == p * static_cast<int>(sizeof(int)));
  for (int k = 0; k < n; ++k) {
    int status = 0, tag = 0, from = -1;
    bsp_get_tag(&status, &tag);
    EXPECT(status == sizeof(int) && tag == 77);
    bsp_move(&from, sizeof from);
    EXPECT(from >= 0 && from < p);
  }
  // a queue of one type yields its values; messages not read are gone after a sync
  bsp::queue<long> single(world);
  single(world.next_rank()).send(5L * s);
  world.sync();
  EXPECT(single.size() == 1 && *single.begin() == 5L * world.prev_rank());
  world.sync();
  EXPECT(single.empty() && numbers.empty());
  tagsize = 0;
  bsp_set_tagsize(&tagsize);
  world.sync();
}

void mixing_with_c(bsp::world& world) {
  int s = world.rank();
  // C registration, then a var, then another C registration: one shared order
  int c_before = -1, c_after = -1;
  bsp_push_reg(&c_before, sizeof c_before);
  bsp::var<int> x(world);
  bsp_push_reg(&c_after, sizeof c_after);
  world.sync();
  bsp_put(world.next_rank(), &s, &c_before, 0, sizeof s);
  x(world.next_rank()) = 10 * s;
  int v = 100 * s;
  bsp_put(world.next_rank(), &v, &c_after, 0, sizeof v);
  bsp_sync();
  EXPECT(c_before == world.prev_rank() && x.value() == 10 * world.prev_rank() && c_after == 100 * world.prev_rank());
  bsp_pop_reg(&c_after);
  bsp_pop_reg(&c_before);
  world.sync();
}

void collectives(bsp::world& world) {
  int p = world.size(), s = world.rank();
  EXPECT(bsp::sum(world, s) == p * (p - 1) / 2);
  EXPECT(bsp::max(world, s) == p - 1 && bsp::min(world, s) == 0);
  // non-commutative but associative: string-like concatenation of digits
  long digits = bsp::fold(world, static_cast<long>(s % 10), [](long a, long b) { return a * 10 + b; });
  long expect = 0;
  for (int r = 0; r < p; ++r) expect = expect * 10 + r % 10;
  EXPECT(digits == expect);
  EXPECT(bsp::scan(world, 1, std::plus<int>()) == s + 1);
  EXPECT(bsp::exclusive_scan(world, 2, std::plus<int>(), 0) == 2 * s);
  EXPECT(bsp::broadcast(world, s * 3 + 1, p - 1) == 3 * (p - 1) + 1);
  std::vector<point> all = bsp::gather_all(world, point{s, 1.0 * s});
  EXPECT(all.size() == static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) EXPECT(all[static_cast<std::size_t>(r)].x == r);
  std::vector<int> out(static_cast<std::size_t>(p));
  for (int t = 0; t < p; ++t) out[static_cast<std::size_t>(t)] = 100 * s + t;
  std::vector<int> in = bsp::all_to_all(world, out);
  for (int r = 0; r < p; ++r) EXPECT(in[static_cast<std::size_t>(r)] == 100 * r + s);
  // sample sort of uneven data with duplicates
  std::vector<int> data;
  unsigned seed = 12345u + static_cast<unsigned>(s);
  for (int k = 0; k < 50 + 37 * s; ++k) {
    seed = seed * 1103515245u + 12345u;
    data.push_back(static_cast<int>((seed >> 16) % 200));
  }
  std::size_t total = bsp::sum(world, data.size());
  std::vector<int> sorted = bsp::sort(world, data);
  EXPECT(std::is_sorted(sorted.begin(), sorted.end()));
  EXPECT(bsp::sum(world, sorted.size()) == total);
  int lowest = sorted.empty() ? 1 << 30 : sorted.front();
  std::vector<int> lows = bsp::gather_all(world, lowest);
  int highest = sorted.empty() ? -1 : sorted.back();
  std::vector<int> highs = bsp::gather_all(world, highest);
  for (int r = 1; r < p; ++r) {
    if (!sorted.empty() && r == s) {
      for (int q = 0; q < r; ++q) EXPECT(highs[static_cast<std::size_t>(q)] <= lowest);
    }
  }
  (void)lows;
}

void partitionings(bsp::world& world) {
  int p = world.size();
  for (std::size_t n : {0u, 1u, 7u, 64u, 101u}) {
    bsp::block_partitioning block(n, p);
    bsp::cyclic_partitioning cyclic(n, p);
    bsp::block_cyclic_partitioning blocks(n, p, 3);
    std::size_t b = 0, c = 0, bc = 0;
    for (int r = 0; r < p; ++r) {
      b += block.local_size(r), c += cyclic.local_size(r), bc += blocks.local_size(r);
      for (std::size_t l = 0; l < block.local_size(r); ++l)
        EXPECT((block.local(block.global(r, l)) == bsp::place{r, l}));
      for (std::size_t l = 0; l < cyclic.local_size(r); ++l)
        EXPECT((cyclic.local(cyclic.global(r, l)) == bsp::place{r, l}));
      for (std::size_t l = 0; l < blocks.local_size(r); ++l)
        EXPECT((blocks.local(blocks.global(r, l)) == bsp::place{r, l}));
    }
    EXPECT(b == n && c == n && bc == n);
    for (std::size_t g = 0; g < n; ++g) {
      bsp::place at = block.local(g);
      EXPECT(block.global(at.owner, at.local) == g && at.local < block.local_size(at.owner));
      at = blocks.local(g);
      EXPECT(blocks.global(at.owner, at.local) == g && at.local < blocks.local_size(at.owner));
    }
  }
  int rows = p % 2 == 0 ? 2 : 1;
  bsp::cartesian_partitioning grid(9, 10, rows, p / rows);
  std::size_t elements = 0;
  for (int r = 0; r < p; ++r) {
    auto [m, n] = grid.local_size(r);
    elements += m * n;
    EXPECT(grid.rank(grid.coordinates(r).first, grid.coordinates(r).second) == r);
  }
  EXPECT(elements == 90);
  for (std::size_t i = 0; i < 9; ++i)
    for (std::size_t j = 0; j < 10; ++j) {
      auto at = grid.local(i, j);
      EXPECT((grid.global(at.owner, at.row, at.col) == std::pair<std::size_t, std::size_t>{i, j}));
    }
}

void logging(bsp::world& world) {
  world.log("log line 1 of rank %d", world.rank());
  world.log("log line 2 of rank %d", world.rank());
  world.sync();
}

// ---- misuses: each must stop the job with a clear message ----

void out_of_range(bsp::world& world) {
  bsp::coarray<int> xs(world, 4);
  if (world.rank() == world.size() - 1) xs(0)[4] = 1;
  world.sync();
}

void slice_out_of_range(bsp::world& world) {
  bsp::coarray<int> xs(world, static_cast<std::size_t>(4 + world.rank()));
  std::vector<int> v(5, 1);
  if (world.rank() == world.size() - 1) xs(0)[{0, 5}] = v;
  world.sync();
}

void future_early(bsp::world& world) {
  bsp::var<int> x(world, 1);
  auto f = x(world.next_rank()).get();
  if (world.rank() == world.size() - 1) std::printf("read %d\n", f.value());
  world.sync();
}

void var_on_some_ranks(bsp::world& world) {
  auto* x = new bsp::var<int>(world);
  if (world.rank() == 0) delete x;
  world.sync();
}

}  // namespace

int main(int argc, char** argv) {
  std::string which = "features";
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--case=", 7) == 0) which = argv[i] + 7;
  }
  return bsp::run(argc, argv, [&](bsp::world& world) {
    if (which == "features") {
      world_basics(world);
      vars(world);
      coarrays(world);
      queues(world);
      mixing_with_c(world);
      collectives(world);
      partitionings(world);
      logging(world);
      if (world.rank() == 0) std::printf("cpp features passed on %d processes\n", world.size());
    } else if (which == "out_of_range") {
      out_of_range(world);
    } else if (which == "slice_out_of_range") {
      slice_out_of_range(world);
    } else if (which == "future_early") {
      future_early(world);
    } else if (which == "var_on_some_ranks") {
      var_on_some_ranks(world);
    } else {
      world.abort("cpp_cases: no case %s", which.c_str());
    }
  });
}
