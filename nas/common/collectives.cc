// nas/common/collectives.cc: reductions and all-gather over a registered scratch area.
#include "nas/common/collectives.h"

#include <algorithm>
#include <cstring>
#include <memory>

#include "bsplib/bsp.h"

namespace nas {

namespace {

// The registered area every process puts its contribution into, one slot per process.
// Grown (re-registered) collectively: all processes ask for the same size in the same call.
struct Scratch {
  std::unique_ptr<char[]> area;
  int capacity = 0;
};

Scratch& scratch() {
  static Scratch instance;
  return instance;
}

// Makes the scratch area hold at least nbytes (one bsp_sync when it grows).
char* scratch_of_size(int nbytes) {
  Scratch& s = scratch();
  if (s.capacity < nbytes) {
    std::unique_ptr<char[]> old = std::move(s.area);
    if (old) bsp_pop_reg(old.get());
    s.capacity = std::max(nbytes, 2 * s.capacity);
    s.area = std::make_unique<char[]>(s.capacity);
    bsp_push_reg(s.area.get(), s.capacity);
    bsp_sync();  // the new registration takes effect; the old area is freed after it
  }
  return s.area.get();
}

// One superstep: every process's nbytes land in slot pid of everyone's scratch area.
const char* exchange(const void* mine, int nbytes) {
  const int p = bsp_nprocs(), me = bsp_pid();
  char* area = scratch_of_size(nbytes * p);
  for (int k = 1; k < p; ++k) {
    int dest = (me + k) % p;
    bsp_put(dest, mine, area, me * nbytes, nbytes);
  }
  std::memcpy(area + me * nbytes, mine, nbytes);
  bsp_sync();
  return area;
}

template <typename T, typename Combine>
void all_reduce(T* values, int count, Combine combine) {
  const int p = bsp_nprocs();
  const int nbytes = count * static_cast<int>(sizeof(T));
  // bsp_put copies values at the call, so they can be overwritten by the result below.
  const char* area = exchange(values, nbytes);
  // Slots start at multiples of nbytes in an area from operator new[], so T-aligned.
  const T* slots = reinterpret_cast<const T*>(area);
  for (int i = 0; i < count; ++i) {
    T result = slots[i];
    for (int q = 1; q < p; ++q) result = combine(result, slots[q * count + i]);
    values[i] = result;
  }
}

}  // namespace

void all_reduce_sum(double* values, int count) {
  all_reduce(values, count, [](double a, double b) { return a + b; });
}

void all_reduce_sum(std::int64_t* values, int count) {
  all_reduce(values, count, [](std::int64_t a, std::int64_t b) { return a + b; });
}

void all_reduce_max(double* values, int count) {
  all_reduce(values, count, [](double a, double b) { return std::max(a, b); });
}

void all_reduce_min(double* values, int count) {
  all_reduce(values, count, [](double a, double b) { return std::min(a, b); });
}

void all_gather(const void* mine, int nbytes, void* all) {
  const char* area = exchange(mine, nbytes);
  std::memcpy(all, area, static_cast<std::size_t>(nbytes) * bsp_nprocs());
}

}  // namespace nas
