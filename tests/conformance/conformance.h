/* tests/conformance/conformance.h: the harness of the BSPlib 1998 conformance programs.
 *
 * Every program is a small C11 program that includes only "bsp.h" and this header, has
 * the textbook shape
 *
 *     #include "conformance.h"
 *     static void spmd(void) {
 *       bsp_begin(conformance_nprocs);
 *       ... CHECK(cond); ...
 *       bsp_end();
 *     }
 *     CONFORMANCE_PROGRAM("rule_name", spmd)
 *
 * and checks its own result: a failed CHECK calls bsp_abort with
 * "conformance <rule>: CHECK failed on pid <p>: <cond> (line <n>)", which stops the job
 * with a non-zero exit. After spmd returns (only pid 0 returns from bsp_end), main prints
 * "conformance <rule> passed" and returns 0.
 *
 * The main that CONFORMANCE_PROGRAM defines starts the program in one of three ways:
 *   --mode=launched   (default) under `bsprun -n P`: conformance_nprocs = bsp_nprocs(),
 *                     which before bsp_begin is the number of processes launched;
 *   --mode=direct --procs=P   without bsprun: bsp_begin(P) starts the P processes itself
 *                     (transport from the environment variable BSP_TRANSPORT);
 *   --mode=init       the classic bsp_init pattern: bsp_init(spmd, argc, argv) is the first
 *                     thing the init path does; then pid 0 alone reads P from standard
 *                     input (scanf), and calls spmd. Under bsprun the other processes go
 *                     straight into spmd from bsp_init, with conformance_nprocs still 0.
 *   --ask=N           bsp_begin asks for N processes instead (e.g. fewer than launched).
 *   --case=NAME       for programs with several cases (conformance_case; NULL if absent).
 * Only the mode is looked at before bsp_init (to choose the path); everything else is
 * read after it.
 */
#ifndef CONFORMANCE_H
#define CONFORMANCE_H

#include <stddef.h> /* NULL, without relying on bsp.h's includes; not <stdio.h>: see oxford_header.c */

#include "bsp.h"

/* The P the program passes to bsp_begin (0 on pids other than 0 in --mode=init). */
extern int conformance_nprocs;
/* bsp_nprocs() called before bsp_begin, where main called it (-1 where it did not:
 * the processes that bsp_init sends straight into spmd). */
extern int conformance_available;
/* The --case=NAME argument, or NULL. Not set on the processes bsp_init sends into spmd. */
extern const char* conformance_case;
/* 1 when --case=name was given. */
int conformance_case_is(const char* name);
/* The rule name given to CONFORMANCE_PROGRAM. */
extern const char* const conformance_rule;

/* Stops the job (bsp_abort) with the rule's name, the pid, the condition and the line. */
#define CHECK(cond)                                                                                                    \
  do {                                                                                                                 \
    if (!(cond))                                                                                                       \
      bsp_abort("conformance %s: CHECK failed on pid %d: %s (line %d)", conformance_rule, bsp_pid(), #cond, __LINE__); \
  } while (0)

/* CHECK(a op b) for integers, printing both values when it fails. */
#define CHECK_INT(a, op, b)                                                                                        \
  do {                                                                                                             \
    long long conformance_a_ = (long long)(a), conformance_b_ = (long long)(b);                                    \
    if (!(conformance_a_ op conformance_b_))                                                                       \
      bsp_abort("conformance %s: CHECK failed on pid %d: %s (line %d): %lld vs %lld", conformance_rule, bsp_pid(), \
                #a " " #op " " #b, __LINE__, conformance_a_, conformance_b_);                                      \
  } while (0)

/* printf to standard output, flushed at once (conformance.h does not include <stdio.h>:
 * the programs include only bsp.h and this header). */
void conformance_say(const char* format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* The generated main (conformance.c). */
int conformance_main(void (*spmd)(void), int argc, char** argv);

#define CONFORMANCE_PROGRAM(rule, spmd_function) \
  const char* const conformance_rule = rule;     \
  int main(int argc, char** argv) { return conformance_main(spmd_function, argc, argv); }

#endif /* CONFORMANCE_H */
