/* examples/prefix_sums.c: parallel prefix sums of the values 1..p held one per process,
 * in log2(p) supersteps of bsp_get (each process fetches the running sum of the process
 * 2^k to its left). Usage: bsprun -n 8 ./prefix_sums */
#include <stdio.h>

#include "bsp.h"

int main(void) {
  bsp_begin(bsp_nprocs());
  int p = bsp_nprocs(), s = bsp_pid();
  long value = s + 1, left_sum = 0;
  bsp_push_reg(&value, sizeof value);
  bsp_sync();
  for (int k = 1; k < p; k *= 2) {
    if (s >= k) bsp_get(s - k, &value, 0, &left_sum, sizeof left_sum);
    bsp_sync(); /* the get reads value before anyone changes it below */
    if (s >= k) value += left_sum;
    bsp_sync(); /* everyone updated before the next round's gets */
  }
  long expected = (long)(s + 1) * (s + 2) / 2;
  if (value != expected) bsp_abort("prefix sum on pid %d: %ld, expected %ld\n", s, value, expected);
  printf("pid %d: prefix sum %ld\n", s, value);
  bsp_pop_reg(&value);
  bsp_end();
  return 0;
}
