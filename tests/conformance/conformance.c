/* tests/conformance/conformance.c: the main of every conformance program (see
 * conformance.h for the three ways of starting). */
#include "conformance.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int conformance_nprocs = 0;
int conformance_available = -1;
const char* conformance_case = NULL;

int conformance_case_is(const char* name) {
  const char *a = conformance_case, *b = name;
  if (!a) return 0;
  while (*a && *a == *b) ++a, ++b;
  return *a == *b;
}

void conformance_say(const char* format, ...) {
  va_list args;
  va_start(args, format);
  vprintf(format, args);
  va_end(args);
  fflush(stdout);
}

/* The value of --name=value in argv, or NULL. */
static const char* argument(int argc, char** argv, const char* name) {
  size_t length = strlen(name);
  for (int i = 1; i < argc; ++i) {
    if (strncmp(argv[i], name, length) == 0 && argv[i][length] == '=') return argv[i] + length + 1;
  }
  return NULL;
}

static int finish(void) {
  printf("conformance %s passed\n", conformance_rule);
  fflush(stdout);
  return 0;
}

/* The bsp_init pattern: bsp_init first, then pid 0 alone reads P from standard input. */
static int init_main(void (*spmd)(void), int argc, char** argv) {
  bsp_init(spmd, argc, argv);
  if (scanf("%d", &conformance_nprocs) != 1) {
    fprintf(stderr, "conformance %s: --mode=init reads the number of processes from stdin\n", conformance_rule);
    return 2;
  }
  conformance_available = bsp_nprocs();
  conformance_case = argument(argc, argv, "--case");
  const char* ask = argument(argc, argv, "--ask");
  if (ask) conformance_nprocs = atoi(ask);
  spmd();
  return finish();
}

int conformance_main(void (*spmd)(void), int argc, char** argv) {
  const char* mode = argument(argc, argv, "--mode");
  if (mode && strcmp(mode, "init") == 0) return init_main(spmd, argc, argv);
  conformance_case = argument(argc, argv, "--case");
  if (!mode || strcmp(mode, "launched") == 0) {
    conformance_available = bsp_nprocs();
    conformance_nprocs = conformance_available;
  } else if (strcmp(mode, "direct") == 0) {
    const char* procs = argument(argc, argv, "--procs");
    if (!procs) {
      fprintf(stderr, "conformance %s: --mode=direct needs --procs=P\n", conformance_rule);
      return 2;
    }
    conformance_available = bsp_nprocs();
    conformance_nprocs = atoi(procs);
  } else {
    fprintf(stderr, "conformance %s: unknown --mode=%s (launched, direct or init)\n", conformance_rule, mode);
    return 2;
  }
  const char* ask = argument(argc, argv, "--ask");
  if (ask) conformance_nprocs = atoi(ask);
  spmd();
  return finish();
}
