/* tests/level1/level1_check.c: calls every function of bsp_level1.h with known inputs on
 * each process and compares every result with the answer computed serially here (each
 * process knows every process's input, as a function of its pid). Pid 0 prints
 * "level1 passed" after bsp_end; a wrong result stops the job through bsp_abort naming
 * the function. With --case=NAME it makes one misuse instead (bad_root, negative_nbytes,
 * null_dst, mismatched_calls), which the library must turn into an abort.
 *
 * Floating-point results are compared exactly. bsp_level1.h defines sums and products
 * as combined left to right in pid order, and the serial answers below are computed in
 * that order in the same precision, so IEEE rounding gives the same bits (plain + and *
 * of two operands: nothing the compiler may contract or reorder without -ffast-math).
 * One family of inputs (multiples of 0.25) is also exact in any order; min, max and sort
 * involve no rounding at all.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bsp.h"
#include "bsp_level1.h"

static int P, me;

/* ---- reporting ------------------------------------------------------------------------ */

static void check_I(const char* function, int got, int want) {
  if (got != want) bsp_abort("level1_check: %s is wrong on pid %d: got %d, want %d", function, me, got, want);
}
static void check_R(const char* function, float got, float want) {
  if (got != want) bsp_abort("level1_check: %s is wrong on pid %d: got %.9g, want %.9g", function, me, got, want);
}
static void check_D(const char* function, double got, double want) {
  if (got != want) bsp_abort("level1_check: %s is wrong on pid %d: got %.17g, want %.17g", function, me, got, want);
}
static void check_C(const char* function, char got, char want) {
  if (got != want) bsp_abort("level1_check: %s is wrong on pid %d: got '%c', want '%c'", function, me, got, want);
}
static void check_bytes(const char* function, const void* got, const void* want, size_t n) {
  size_t i;
  for (i = 0; i < n; i++) {
    if (((const unsigned char*)got)[i] != ((const unsigned char*)want)[i]) {
      bsp_abort("level1_check: %s is wrong on pid %d: byte %zu of %zu is %d, want %d", function, me, i, n,
                ((const unsigned char*)got)[i], ((const unsigned char*)want)[i]);
    }
  }
}

/* ---- inputs: process q's value ---------------------------------------------------------- */

static int iv(int q) { return (q * 7) % 11 - 5; }               /* -5 .. 5, repeats, a zero at q = 7 */
static int iw(int q) { return (q % 2 ? -1 : 1) * (q % 3 + 1); } /* no zero: products stay non-zero */
static float rv(int q) { return 0.1f * (float)(q + 1); }        /* inexact: rounding depends on order */
static float rq(int q) { return 0.25f * (float)iv(q); }         /* exact in any order */
static double dv(int q) { return 0.1 * (q + 1) + 1.0 / 3.0; }
static double dw(int q) { return 1.0 + 1.0 / (q + 3); }
static char cv(int q) { return (char)('a' + (q * 5) % 7); }

/* Byte k of a pattern seeded by s (different for every s up to large sizes). */
static unsigned char pattern(int s, size_t k) { return (unsigned char)(s * 31 + k * 7 + (k >> 8) + 1); }
static void fill(unsigned char* buffer, size_t n, int s) {
  size_t k;
  for (k = 0; k < n; k++) buffer[k] = pattern(s, k);
}
static void* allocate(size_t n) {
  void* p = malloc(n > 0 ? n : 1);
  if (p == NULL) bsp_abort("level1_check: out of memory (%zu bytes)", n);
  return p;
}

/* ---- serial answers: v(0) op v(1) op ... op v(n-1), left to right ------------------------ */

#define DEFINE_SERIAL(T, L)                                \
  static T sum_##L(T (*v)(int), int n) {                   \
    T acc = v(0);                                          \
    int q;                                                 \
    for (q = 1; q < n; q++) acc = acc + v(q);              \
    return acc;                                            \
  }                                                        \
  static T product_##L(T (*v)(int), int n) {               \
    T acc = v(0);                                          \
    int q;                                                 \
    for (q = 1; q < n; q++) acc = acc * v(q);              \
    return acc;                                            \
  }                                                        \
  static T min_##L(T (*v)(int), int n) {                   \
    T acc = v(0);                                          \
    int q;                                                 \
    for (q = 1; q < n; q++) acc = v(q) < acc ? v(q) : acc; \
    return acc;                                            \
  }                                                        \
  static T max_##L(T (*v)(int), int n) {                   \
    T acc = v(0);                                          \
    int q;                                                 \
    for (q = 1; q < n; q++) acc = v(q) > acc ? v(q) : acc; \
    return acc;                                            \
  }

/* The i-th smallest of v(0 .. n-1) (insertion sort). */
#define DEFINE_SORTED(T, L)                                          \
  static T sorted_##L(T (*v)(int), int n, int i) {                   \
    T *all = allocate(sizeof(T) * (size_t)n), result;                \
    int q, k;                                                        \
    for (q = 0; q < n; q++) {                                        \
      T x = v(q);                                                    \
      for (k = q; k > 0 && x < all[k - 1]; k--) all[k] = all[k - 1]; \
      all[k] = x;                                                    \
    }                                                                \
    result = all[i];                                                 \
    free(all);                                                       \
    return result;                                                   \
  }

DEFINE_SERIAL(int, I)
DEFINE_SERIAL(float, R)
DEFINE_SERIAL(double, D)
DEFINE_SORTED(int, I)
DEFINE_SORTED(float, R)
DEFINE_SORTED(double, D)
DEFINE_SORTED(char, C)

/* Every reduction and prefix of one type, on the inputs v. */
#define CHECK_FAMILY(L, v)                                                                         \
  do {                                                                                             \
    check_##L("bsp_sum" #L, bsp_sum##L(v(me)), sum_##L(v, P));                                     \
    check_##L("bsp_sum" #L "_prefix", bsp_sum##L##_prefix(v(me)), sum_##L(v, me + 1));             \
    check_##L("bsp_product" #L, bsp_product##L(v(me)), product_##L(v, P));                         \
    check_##L("bsp_product" #L "_prefix", bsp_product##L##_prefix(v(me)), product_##L(v, me + 1)); \
    check_##L("bsp_min" #L, bsp_min##L(v(me)), min_##L(v, P));                                     \
    check_##L("bsp_min" #L "_prefix", bsp_min##L##_prefix(v(me)), min_##L(v, me + 1));             \
    check_##L("bsp_max" #L, bsp_max##L(v(me)), max_##L(v, P));                                     \
    check_##L("bsp_max" #L "_prefix", bsp_max##L##_prefix(v(me)), max_##L(v, me + 1));             \
    check_##L("bsp_sort" #L, bsp_sort##L(v(me)), sorted_##L(v, P, me));                            \
  } while (0)

/* ---- a user operator for bsp_fold and bsp_scan: 2x2 matrix product -----------------------
 * Associative (arithmetic mod 2^32) but not commutative, so the order of combination
 * shows in the result. */
typedef struct {
  unsigned a, b, c, d;
} matrix;

/* q B + C with B = (1 0; 1 0), C = (1 1; 0 2): M(p) M(q) - M(q) M(p) = (p - q)(BC - CB) != 0. */
static matrix matrix_of(int q) {
  matrix m;
  m.a = (unsigned)q + 1u;
  m.b = 1u;
  m.c = (unsigned)q;
  m.d = 2u;
  return m;
}

static void multiply(void* res, void* left, void* right, int* nbytes) {
  const matrix *l = left, *r = right;
  matrix* o = res;
  if (*nbytes != (int)sizeof(matrix))
    bsp_abort("level1_check: op got nbytes %d, want %d", *nbytes, (int)sizeof(matrix));
  if (res == left || res == right) bsp_abort("level1_check: op's result aliases an argument on pid %d", me);
  o->a = l->a * r->a + l->b * r->c;
  o->b = l->a * r->b + l->b * r->d;
  o->c = l->c * r->a + l->d * r->c;
  o->d = l->c * r->b + l->d * r->d;
}

static matrix matrix_product(int n) {
  matrix acc = matrix_of(0), next, m;
  int q, size = sizeof(matrix);
  for (q = 1; q < n; q++) {
    m = matrix_of(q);
    multiply(&next, &acc, &m, &size);
    acc = next;
  }
  return acc;
}

/* Element-wise sum of int vectors: a larger operand (kVector ints). */
enum { kVector = 3000 };
static int vector_element(int q, int k) { return (q * 13 + k) % 101 - 50; }
static void add_vectors(void* res, void* left, void* right, int* nbytes) {
  int k, n = *nbytes / (int)sizeof(int);
  for (k = 0; k < n; k++) ((int*)res)[k] = ((int*)left)[k] + ((int*)right)[k];
}

/* The operator must not be called at all when nbytes is 0. */
static void never(void* res, void* left, void* right, int* nbytes) {
  (void)res, (void)left, (void)right;
  bsp_abort("level1_check: op called with nbytes %d for a fold of 0 bytes", *nbytes);
}

/* ---- the checks ------------------------------------------------------------------------ */

static void check_bcast(int root, size_t n) {
  unsigned char *src = allocate(n), *dst = allocate(n), *want = allocate(n);
  fill(src, n, me); /* only the root's matters */
  memset(dst, 0xEE, n);
  fill(want, n, root);
  bsp_bcast(root, src, dst, (int)n); /* the macro: bsp_bcast_cpp with this file and line */
  check_bytes("bsp_bcast", dst, want, n);

  fill(src, n, me + 50); /* the function itself, in place (src == dst on the root) */
  (bsp_bcast)(root, src, src, (int)n);
  fill(want, n, root + 50);
  check_bytes("bsp_bcast (in place)", src, want, n);

  memset(dst, 0xEE, n); /* as the toolset required: dst registered by the caller */
  bsp_push_reg(dst, (int)n);
  bsp_sync();
  fill(src, n, me + 90);
  bsp_bcast(root, src, dst, (int)n);
  bsp_pop_reg(dst);
  fill(want, n, root + 90);
  check_bytes("bsp_bcast (dst registered)", dst, want, n);
  bsp_sync(); /* the pop takes effect before dst is freed */
  free(src), free(dst), free(want);
}

static void check_gather(int root, size_t n) {
  unsigned char *src = allocate(n), *dst = me == root ? allocate(n * P) : NULL, *want = allocate(n);
  int q;
  fill(src, n, me + 7);
  if (dst) memset(dst, 0xEE, n * P);
  bsp_gather(root, src, dst, (int)n);
  if (dst) {
    for (q = 0; q < P; q++) {
      fill(want, n, q + 7);
      check_bytes("bsp_gather", dst + (size_t)q * n, want, n);
    }
  }
  free(src), free(dst), free(want);
}

static void check_scatter(int root, size_t n) {
  unsigned char *src = me == root ? allocate(n * P) : NULL, *dst = allocate(n), *want = allocate(n);
  int q;
  if (src) {
    for (q = 0; q < P; q++) fill(src + (size_t)q * n, n, q + 11);
  }
  memset(dst, 0xEE, n);
  bsp_scatter(root, src, dst, (int)n);
  fill(want, n, me + 11);
  check_bytes("bsp_scatter", dst, want, n);
  free(src), free(dst), free(want);
}

static void check_fold_and_scan(void) {
  matrix mine = matrix_of(me), got, want;
  int *vector = allocate(sizeof(int) * kVector), *sum = allocate(sizeof(int) * kVector),
      *expected = allocate(sizeof(int) * kVector);
  int k, q;

  memset(&got, 0, sizeof got);
  bsp_fold(multiply, &mine, &got, sizeof(matrix));
  want = matrix_product(P);
  check_bytes("bsp_fold", &got, &want, sizeof want);

  got = mine; /* in place: src == dst */
  bsp_fold(multiply, &got, &got, sizeof(matrix));
  check_bytes("bsp_fold (in place)", &got, &want, sizeof want);

  memset(&got, 0, sizeof got);
  bsp_scan(multiply, &mine, &got, sizeof(matrix));
  want = matrix_product(me + 1);
  check_bytes("bsp_scan", &got, &want, sizeof want);

  for (k = 0; k < kVector; k++) vector[k] = vector_element(me, k);
  bsp_fold(add_vectors, vector, sum, sizeof(int) * kVector);
  for (k = 0; k < kVector; k++) {
    expected[k] = 0;
    for (q = 0; q < P; q++) expected[k] += vector_element(q, k);
  }
  check_bytes("bsp_fold (vector)", sum, expected, sizeof(int) * kVector);
  bsp_scan(add_vectors, vector, sum, sizeof(int) * kVector);
  for (k = 0; k < kVector; k++) {
    expected[k] = 0;
    for (q = 0; q <= me; q++) expected[k] += vector_element(q, k);
  }
  check_bytes("bsp_scan (vector)", sum, expected, sizeof(int) * kVector);
  free(vector), free(sum), free(expected);
}

static void check_zero_bytes(void) { /* NULL buffers are fine when there is nothing to move */
  bsp_bcast(P - 1, NULL, NULL, 0);
  bsp_gather(0, NULL, NULL, 0);
  bsp_scatter(P - 1, NULL, NULL, 0);
  bsp_fold(never, NULL, NULL, 0);
  bsp_scan(never, NULL, NULL, 0);
}

static void check_logic(void) {
  check_I("bsp_all", bsp_all(1), 1);
  check_I("bsp_all", bsp_all(5), 1); /* any non-zero is true; the answer is 1 */
  check_I("bsp_all", bsp_all(me != P - 1), 0);
  check_I("bsp_any", bsp_any(0), 0);
  check_I("bsp_any", bsp_any(me == P - 1 ? -3 : 0), 1);
  check_I("bsp_all_prefix", bsp_all_prefix(me != 1), me < 1 ? 1 : 0);
  check_I("bsp_any_prefix", bsp_any_prefix(me == 1), me >= 1 ? 1 : 0);
  check_I("bsp_constantI", bsp_constantI(42), 1);
  check_I("bsp_constantI", bsp_constantI(me), P == 1 ? 1 : 0);
  check_I("bsp_constantI", bsp_constantI(me == P - 1 ? 7 : 8), P == 1 ? 1 : 0);
}

/* Puts the caller made before a collective land at its first sync. */
static int inbox = -1;
static void check_superstep_boundary(void) {
  int mine = 1000 + me, total;
  bsp_push_reg(&inbox, sizeof inbox);
  bsp_sync();
  bsp_put((me + 1) % P, &mine, &inbox, 0, sizeof mine);
  total = bsp_sumI(1);
  check_I("bsp_sumI (after a put)", total, P);
  check_I("bsp_sumI (a put before it landed)", inbox, 1000 + (me + P - 1) % P);
  bsp_pop_reg(&inbox);
  bsp_sync();
}

/* Many calls in a row: each registers and pops a scratch area of its own. */
static void check_repetition(void) {
  int i;
  for (i = 0; i < 100; i++) {
    check_I("bsp_sumI (repeated)", bsp_sumI(i + me), P * i + P * (P - 1) / 2);
    check_D("bsp_maxD (repeated)", bsp_maxD(i * 0.5 + me), i * 0.5 + (P - 1));
  }
}

static void run_all_checks(void) {
  int roots[3], r;
  size_t sizes[] = {1, 4, 37, 4096, 200000}, s;
  roots[0] = 0, roots[1] = P - 1, roots[2] = P / 2;
  for (r = 0; r < 3; r++) {
    for (s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
      check_bcast(roots[r], sizes[s]);
      if (sizes[s] <= 4096) {
        check_gather(roots[r], sizes[s]);
        check_scatter(roots[r], sizes[s]);
      }
    }
  }
  check_fold_and_scan();
  check_zero_bytes();
  check_logic();
  CHECK_FAMILY(I, iv);
  CHECK_FAMILY(I, iw);
  CHECK_FAMILY(R, rv);
  CHECK_FAMILY(R, rq);
  CHECK_FAMILY(D, dv);
  CHECK_FAMILY(D, dw);
  check_C("bsp_sortC", bsp_sortC(cv(me)), sorted_C(cv, P, me));
  check_superstep_boundary();
  check_repetition();
}

/* ---- misuse: each must stop the job with the function's name ----------------------------- */

static void misuse(const char* name) {
  int x = 1;
  matrix m = matrix_of(me);
  if (strcmp(name, "bad_root") == 0) {
    bsp_bcast(P, &x, &x, sizeof x);
  } else if (strcmp(name, "negative_nbytes") == 0) {
    bsp_fold(multiply, &m, &m, -4);
  } else if (strcmp(name, "null_dst") == 0) {
    bsp_gather(0, &x, NULL, sizeof x);
  } else if (strcmp(name, "mismatched_calls") == 0) {
    if (me == 0) x = bsp_sumI(x);
    else x = bsp_maxI(x);
  } else {
    bsp_abort("level1_check: unknown case '%s'", name);
  }
  bsp_sync(); /* pid 0 does not check its own call: it waits here for the others' abort */
  bsp_abort("level1_check: case %s was not stopped by the library", name);
}

int main(int argc, char** argv) {
  const char* misuse_case = NULL;
  int i;
  for (i = 1; i < argc; i++) {
    if (strncmp(argv[i], "--case=", 7) == 0) misuse_case = argv[i] + 7;
  }
  bsp_begin(bsp_nprocs());
  P = bsp_nprocs();
  me = bsp_pid();
  if (misuse_case) misuse(misuse_case);
  run_all_checks();
  bsp_end();
  printf("level1 passed\n");
  return 0;
}
