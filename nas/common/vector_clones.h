// nas/common/vector_clones.h: NAS_VECTOR_CLONES marks a hot numerical kernel that GCC
// compiles twice, for the baseline x86-64 the build targets and for x86-64-v4 (AVX-512
// with fused multiply-add); the dynamic loader picks the one the CPU runs (target_clones,
// an ifunc). The binaries stay portable, and a machine with AVX-512 gets the wide vectors.
// Packages that use it compile with -ffp-contract=off: otherwise the v4 clone would fuse
// a * b + c into one rounding and its results would differ from the baseline's in the last
// bits; without fusing, both clones print the same norms bit for bit (the wide vectors
// alone did the work: BT class W at p = 1, 0.94 -> 0.63-0.66 s, with or without fusing).
// Put it on the definition of a function whose loops are the work (inline helpers called
// there are compiled into each clone); a call costs one indirect jump, so not on a
// function called per point from another kernel.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(NAS_NO_VECTOR_CLONES)
#define NAS_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v4", "default")))
#else
#define NAS_VECTOR_CLONES
#endif
