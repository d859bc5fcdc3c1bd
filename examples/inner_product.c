/* examples/inner_product.c: the inner product of two vectors of length n spread
 * cyclically over the processes (as in Bisseling's BSPedupack bspip): each process sums
 * its part, puts its partial sum into every process, and all add the p partial sums.
 * Usage: bsprun -n 4 ./inner_product [n]   (checks against the closed form) */
#include <stdio.h>
#include <stdlib.h>

#include "bsp.h"

static long n = 100000;

static void spmd(void) {
  bsp_begin(bsp_nprocs());
  int p = bsp_nprocs(), s = bsp_pid();
  double* partial = calloc((size_t)p, sizeof(double));
  bsp_push_reg(partial, p * (int)sizeof(double));
  bsp_sync();

  double sum = 0;
  for (long i = s; i < n; i += p) sum += (double)(i + 1) * (double)(i + 1); /* x = y = 1..n */
  for (int t = 0; t < p; ++t) bsp_put(t, &sum, partial, s * (int)sizeof(double), sizeof(double));
  bsp_sync();

  double total = 0;
  for (int t = 0; t < p; ++t) total += partial[t];
  double expected = (double)n * (n + 1) * (2 * n + 1) / 6.0;
  if (total != expected) bsp_abort("inner product on pid %d: %.0f, expected %.0f\n", s, total, expected);
  if (s == 0) printf("inner product of 1..%ld with itself on %d processes = %.0f (correct)\n", n, p, total);
  bsp_pop_reg(partial);
  free(partial);
  bsp_end();
}

int main(int argc, char** argv) {
  bsp_init(spmd, argc, argv);
  if (argc > 1) n = atol(argv[1]);
  spmd();
  return 0;
}
