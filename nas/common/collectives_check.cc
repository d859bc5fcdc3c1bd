// nas/common/collectives_check.cc: a BSPlib program that checks nas/common's collectives
// on however many processes it is run with: sums, maxima, minima and all-gathers of
// known per-process values (including a growth of the scratch area mid-run), the same
// bits on every process. Prints "collectives ok on P processes" from pid 0, or aborts
// naming the first mismatch. Run by collectives_test under bsprun.
#include <cstdint>
#include <cstdio>
#include <vector>

#include "bsplib/bsp.h"
#include "nas/common/collectives.h"

namespace {

void expect(bool ok, const char* what, int index) {
  if (!ok) bsp_abort("collectives: %s wrong at %d on pid %d\n", what, index, bsp_pid());
}

void check_all() {
  const int p = bsp_nprocs(), me = bsp_pid();
  double scalar_sum = nas::all_sum(me + 1.0);
  expect(scalar_sum == p * (p + 1) / 2.0, "all_sum", 0);
  expect(nas::all_max(static_cast<double>(me)) == p - 1, "all_max", 0);
  expect(nas::all_min(static_cast<double>(me)) == 0, "all_min", 0);

  for (int count : {3, 1000, 20000}) {  // grows the registered scratch area twice
    std::vector<std::int64_t> values(count);
    for (int i = 0; i < count; ++i) values[i] = static_cast<std::int64_t>(i) * (me + 1);
    nas::all_reduce_sum(values.data(), count);
    for (int i = 0; i < count; ++i) expect(values[i] == static_cast<std::int64_t>(i) * p * (p + 1) / 2, "int64 sum", i);

    std::vector<int> mine(count), all(static_cast<std::size_t>(count) * p);
    for (int i = 0; i < count; ++i) mine[i] = me * 100000 + i;
    nas::all_gather(mine.data(), count * static_cast<int>(sizeof(int)), all.data());
    for (int q = 0; q < p; ++q)
      for (int i = 0; i < count; ++i)
        expect(all[static_cast<std::size_t>(q) * count + i] == q * 100000 + i, "all_gather", i);
  }
  // Identical bits everywhere: a sum whose value depends on the order of additions.
  double tricky = nas::all_sum(me % 2 ? 1e16 : 1.0);
  double biggest = nas::all_max(tricky), smallest = nas::all_min(tricky);
  expect(biggest == smallest, "bit-identical sum", 0);
}

}  // namespace

int main() {
  bsp_begin(bsp_nprocs());
  check_all();
  if (bsp_pid() == 0) std::printf("collectives ok on %d processes\n", bsp_nprocs());
  bsp_end();
  return 0;
}
