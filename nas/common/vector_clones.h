// nas/common/vector_clones.h: marks for hot numerical kernels that GCC compiles twice,
// for the baseline x86-64 the build targets and for a wider vector unit; the dynamic
// loader picks the clone the CPU runs (target_clones, an ifunc), so the binaries stay
// portable. Which width pays is measured per kernel, not assumed:
//   NAS_CLONES_AVX512 (x86-64-v4): BT's 5x5 block elimination, class W at p = 1,
//     0.92-0.94 s -> 0.63-0.66 s (AVX2 alone: 0.89);
//   NAS_CLONES_AVX2: MG's stencils, memory-bound, where AVX-512 took 6-8 % more time than
//     the baseline and AVX2 23 % less (perf samples in residual, smooth, restriction);
//     SP's line solver and compute_rhs, class W at p = 1 CPU time -15 % (AVX-512: the same
//     as AVX2 with the whole package built for it). A helper a clone must not call
//     through (one call per row) is [[gnu::always_inline]], so each clone has its own copy.
// Packages that use them compile with -ffp-contract=off: otherwise a clone could fuse
// a * b + c into one rounding and its results would differ from the baseline's in the
// last bits; without fusing, every clone prints the same norms bit for bit (BT gained as
// much without fusing as with it).
// Put a mark on the definition of a function whose loops are the work (inline helpers
// called there are compiled into each clone); a call costs one indirect jump, so not on
// a function called per point from another kernel. -DNAS_NO_VECTOR_CLONES: baseline only.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(NAS_NO_VECTOR_CLONES)
#define NAS_CLONES_AVX512 __attribute__((target_clones("arch=x86-64-v4", "default")))
#define NAS_CLONES_AVX2 __attribute__((target_clones("avx2", "default")))
#else
#define NAS_CLONES_AVX512
#define NAS_CLONES_AVX2
#endif
