/* bsp.h: the BSPlib programming interface (Hill et al., "BSPlib: The BSP Programming
 * Library", Parallel Computing 24(14), 1998), with C linkage, for C99 and C++.
 *
 * A program is a sequence of supersteps: local computation plus bsp_put / bsp_get /
 * bsp_send, ended by bsp_sync. Communication posted in a superstep takes effect at the
 * end of it. Run a program with `bsprun -n P prog args...`, or run it directly: the
 * processes that bsp_begin(P) asks for are started on this host.
 *
 * Compatibility: the typedefs of MulticoreBSP's 1998-compatible mode and the older names
 * of the Oxford BSP toolset (bsp_pushregister, bsp_popregister, bsp_set_tag_size,
 * bsp_bsmp_info) are provided, so programs written for those libraries compile unchanged.
 */
#ifndef BSPLIB_BSP_H
#define BSPLIB_BSP_H

/* As the Oxford toolset's bsp.h: its example programs use printf and malloc without
 * including these themselves. */
#include <stdio.h>
#include <stdlib.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Types of the 1998 standard's int arguments, named as MulticoreBSP and BSPonMPI do. */
typedef int bsp_pid_t;
typedef int bsp_nprocs_t;
typedef int bsp_size_t;

/* ---- Starting and stopping an SPMD computation -------------------------------------- */

/* Starts the SPMD part with at most maxprocs processes (the first statement of it). */
void bsp_begin(bsp_pid_t maxprocs);
/* Ends the SPMD part (its last statement). Collective; only process 0 continues after it. */
void bsp_end(void);
/* Called first in main when the SPMD part is a function other than main: process 0
 * returns and continues in main (it may read input, then calls spmd); the other processes
 * run spmd directly and exit when it returns. */
void bsp_init(void (*spmd)(void), int argc, char** argv);

/* ---- Enquiry ------------------------------------------------------------------------ */

bsp_pid_t bsp_pid(void);
/* Inside the SPMD part: the number of processes. Before bsp_begin: how many are available. */
bsp_pid_t bsp_nprocs(void);
/* Seconds since bsp_begin (wall clock, high resolution). */
double bsp_time(void);

/* Stops every process: the message (printf-style) is printed once, exit status non-zero. */
void bsp_abort(const char* format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2), noreturn))
#endif
    ;

/* ---- Superstep -------------------------------------------------------------------- */

/* Ends the superstep: a barrier at which all communication of the superstep completes. */
void bsp_sync(void);

/* ---- DRMA: direct remote memory access ---------------------------------------------- */

/* Registers ident (size bytes) for remote access. Collective, matched by order across
 * processes, in effect from the next bsp_sync. NULL and size 0 are allowed. */
void bsp_push_reg(const void* ident, bsp_size_t size);
/* Removes the most recent registration of ident, from the next bsp_sync. Collective. */
void bsp_pop_reg(const void* ident);
/* Copies nbytes from src (read now) into pid's registration dst at byte offset, at the
 * end of the superstep. */
void bsp_put(bsp_pid_t pid, const void* src, void* dst, bsp_size_t offset, bsp_size_t nbytes);
/* Copies nbytes from pid's registration src at offset into dst, at the end of the
 * superstep, before that superstep's puts land. */
void bsp_get(bsp_pid_t pid, const void* src, bsp_size_t offset, void* dst, bsp_size_t nbytes);
/* Unbuffered put: src may be read at any time up to the end of the superstep. */
void bsp_hpput(bsp_pid_t pid, const void* src, void* dst, bsp_size_t offset, bsp_size_t nbytes);
/* Unbuffered get: dst may be written at any time up to the end of the superstep. */
void bsp_hpget(bsp_pid_t pid, const void* src, bsp_size_t offset, void* dst, bsp_size_t nbytes);

/* ---- BSMP: bulk synchronous message passing ---------------------------------------- */

/* Sets the tag size for the next superstep's messages; *tag_nbytes gets the previous one. */
void bsp_set_tagsize(bsp_size_t* tag_nbytes);
/* Sends a message (tag of the current tag size, payload copied now), delivered at pid
 * in the next superstep. */
void bsp_send(bsp_pid_t pid, const void* tag, const void* payload, bsp_size_t payload_nbytes);
/* Number of messages not yet moved, and their total payload bytes. */
void bsp_qsize(bsp_nprocs_t* nmessages, bsp_size_t* accum_nbytes);
/* *status = payload size of the first message (-1 if none); its tag is copied to tag. */
void bsp_get_tag(bsp_size_t* status, void* tag);
/* Copies at most reception_nbytes of the first message's payload, and removes it. */
void bsp_move(void* payload, bsp_size_t reception_nbytes);
/* Points at the first message's tag and payload (valid until the next bsp_sync), removes
 * it from the queue and returns its payload size; -1 when the queue is empty. */
bsp_size_t bsp_hpmove(void** tag_ptr, void** payload_ptr);

/* ---- Older names (Oxford BSP toolset, BSPlib drafts) --------------------------------- */

void bsp_pushregister(const void* ident, bsp_size_t size);
void bsp_popregister(const void* ident);
void bsp_set_tag_size(bsp_size_t* tag_nbytes);
void bsp_bsmp_info(bsp_nprocs_t* nmessages, bsp_size_t* accum_nbytes);
double bsp_dtime(void); /* seconds since the previous call of bsp_dtime */

/* The Oxford toolset's BSP parameters of the machine (as bsp_probe prints them): s in flop/s,
 * l in flops, g in flops per 8-byte word. From BSP_SLG=S,L,G (Mflop/s, flops, flops per
 * word), else BSP_PARAMS=CSV (bench/bsp_params output; default results/bench/params.csv:
 * the row of the job's transport nearest its p), else a default with a note on stderr. */
double bsp_s(void);
double bsp_l(void);
double bsp_g(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* BSPLIB_BSP_H */
