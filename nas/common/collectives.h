// nas/common/collectives.h: the few collective operations the NAS kernels need on top of
// BSPlib, each one superstep: every process puts its contribution into a slot of every
// other process's scratch area (a registration kept between calls, grown when needed,
// which costs one extra bsp_sync the first time), then combines the slots locally in
// pid order, so every process gets bit-identical results.
// All are collective: every process calls them in the same order with the same count.
#pragma once

#include <cstdint>

namespace nas {

// values[i] <- sum over processes of values[i] (summed in pid order).
void all_reduce_sum(double* values, int count);
void all_reduce_sum(std::int64_t* values, int count);
// values[i] <- max / min over processes of values[i].
void all_reduce_max(double* values, int count);
void all_reduce_min(double* values, int count);

// Every process contributes nbytes at mine; all receives nprocs * nbytes, in pid order.
void all_gather(const void* mine, int nbytes, void* all);

// Scalar conveniences.
inline double all_sum(double value) {
  all_reduce_sum(&value, 1);
  return value;
}
inline double all_max(double value) {
  all_reduce_max(&value, 1);
  return value;
}
inline double all_min(double value) {
  all_reduce_min(&value, 1);
  return value;
}

}  // namespace nas
