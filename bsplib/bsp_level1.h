/* bsp_level1.h: the Oxford BSP toolset's "level 1" library of collective operations
 * (broadcast, gather, scatter, fold, scan, the typed reductions and prefixes, sorting
 * one value per process), with the toolset's C names and signatures (its bsp_level1.h
 * and man pages bsplib_level1(3), bsp_bcast(3), bsp_fold(3), release 1.4, 1998), so
 * programs written for it compile unchanged. Written on top of the public BSPlib API of
 * bsp.h only; the implementation is bsplib/level1.cc.
 *
 * Every function is collective: all processes call it, in the same order, with the same
 * root pid and nbytes. Each one is two supersteps (it ends the caller's superstep):
 *   1. the caller's pending communication completes, and a scratch area the function
 *      allocates is registered on every process;
 *   2. the data moves by bsp_put into the scratch areas (the h-relation is given per
 *      function below, n = nbytes, P = bsp_nprocs()), then the scratch area is popped.
 * Pid 0 also puts 32 bytes describing its call (function, root, nbytes) to every
 * process in step 2, so processes that disagree about the call stop the job with a
 * message instead of computing garbage; that adds 32 (P-1) bytes to pid 0's output.
 * No registration is left behind, and dst need not be registered (the toolset required
 * it for bsp_bcast, bsp_gather and bsp_scan; a registered dst still works). Because a
 * call is two supersteps, BSMP messages sent in the calling superstep are delivered at
 * the first step's sync and dropped at the second: move them before calling.
 *
 * Bad arguments stop the job through bsp_abort with a message naming the function, the
 * pid and the value: nbytes < 0, a root pid outside 0 .. P-1, a NULL op, or a NULL
 * src / dst where data is read or written (NULL is allowed when nbytes is 0, and for the
 * buffers a process does not use: src away from the root of bsp_bcast and bsp_scatter,
 * dst away from the root of bsp_gather).
 *
 * The BSP cost parameters bsp_s, bsp_l and bsp_g are declared in bsp.h (the toolset read
 * them from a per-machine calibration file written by its installer; here they come from
 * BSP_SLG, or bench/bsp_params output, or a default: bsp.h says how).
 *
 * Not provided: bsp_nhalf (nothing here measures n_half), and the Fortran 77 bindings
 * (bspbcast, bspfold, ... and the bsp*_common helpers).
 */
#ifndef BSPLIB_BSP_LEVEL1_H
#define BSPLIB_BSP_LEVEL1_H

#include "bsp.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Data movement ------------------------------------------------------------------ */

/* The nbytes at src on process pid are copied into dst on every process (src and dst may
 * be the same). h-relation (P-1) n (the root sends, each other process receives n). */
void bsp_bcast(int pid, void* src, void* dst, int nbytes);
/* Process pid receives every process's nbytes at src, process i's at dst + i*nbytes
 * (dst holds P*nbytes on pid; unused elsewhere). h-relation (P-1) n (the root receives). */
void bsp_gather(int pid, void* src, void* dst, int nbytes);
/* Block i of the P*nbytes at src on process pid (bytes i*nbytes ..) goes to dst on
 * process i (src unused away from pid). h-relation (P-1) n (the root sends). */
void bsp_scatter(int pid, void* src, void* dst, int nbytes);

/* ---- Reduction and prefix with a user operator ---------------------------------------- */

/* op(res, left, right, &nbytes) stores left (+) right in res; the three never alias, and
 * op may assume (+) is associative. */
/* Every process's dst = src(0) (+) src(1) (+) ... (+) src(P-1), combined left to right in
 * pid order, so every process gets the same bytes. h-relation (P-1) n (total exchange). */
void bsp_fold(void (*op)(void*, void*, void*, int*), void* src, void* dst, int nbytes);
/* Inclusive prefix: dst on process i = src(0) (+) ... (+) src(i), left to right (pid 0 gets
 * its own src). h-relation (P-1) n (pid 0 sends to all, pid P-1 receives from all). */
void bsp_scan(void (*op)(void*, void*, void*, int*), void* src, void* dst, int nbytes);

/* ---- Typed reductions (every process gets the result; h-relation (P-1) sizeof(type)) --
 * Suffix I = int, R = float, D = double (as the toolset: R is the Fortran "REAL").
 * Sums and products combine left to right in pid order (so every process gets the same
 * float result, and int arithmetic wraps around on overflow); min and max compare with
 * < and > as the toolset did. */
int bsp_all(int x);       /* 1 when x is non-zero on every process, else 0 */
int bsp_any(int x);       /* 1 when x is non-zero on some process, else 0 */
int bsp_constantI(int x); /* 1 when x is the same on every process, else 0 */
int bsp_sumI(int x);
float bsp_sumR(float x);
double bsp_sumD(double x);
int bsp_productI(int x);
float bsp_productR(float x);
double bsp_productD(double x);
int bsp_minI(int x);
float bsp_minR(float x);
double bsp_minD(double x);
int bsp_maxI(int x);
float bsp_maxR(float x);
double bsp_maxD(double x);

/* ---- Typed inclusive prefixes: on process i, x(0) (+) ... (+) x(i) ------------------- */
int bsp_sumI_prefix(int x);
float bsp_sumR_prefix(float x);
double bsp_sumD_prefix(double x);
int bsp_productI_prefix(int x);
float bsp_productR_prefix(float x);
double bsp_productD_prefix(double x);
int bsp_minI_prefix(int x);
float bsp_minR_prefix(float x);
double bsp_minD_prefix(double x);
int bsp_maxI_prefix(int x);
float bsp_maxR_prefix(float x);
double bsp_maxD_prefix(double x);
/* In the toolset's library though not its header: prefix "and" and "or" (0 or 1). */
int bsp_all_prefix(int x);
int bsp_any_prefix(int x);

/* ---- Sorting one value per process ---------------------------------------------------- *
 * Process i gets the i-th smallest of the P values (ascending by <; NaNs last).
 * h-relation (P-1) sizeof(type) (total exchange, then a local sort). */
int bsp_sortI(int x);
float bsp_sortR(float x);
double bsp_sortD(double x);
char bsp_sortC(char x);

/* ---- The toolset's call-site forms ----------------------------------------------------
 * bsp_bcast and bsp_fold are macros for these, as in the toolset, so that an error names
 * the file and line of the call. */
void bsp_bcast_cpp(int pid, void* src, void* dst, int nbytes, int lineno, char* filename);
void bsp_fold_cpp(void (*op)(void*, void*, void*, int*), void* src, void* dst, int nbytes, int lineno, char* filename);

#ifdef __cplusplus
} /* extern "C" */
#endif

#define bsp_bcast(p, s, d, n) bsp_bcast_cpp(p, s, d, n, __LINE__, (char*)__FILE__)
#define bsp_fold(f, s, d, n) bsp_fold_cpp(f, s, d, n, __LINE__, (char*)__FILE__)

#endif /* BSPLIB_BSP_LEVEL1_H */
