/* Expected behaviour (BSPlib 1998, bsp_begin): a program that never calls bsp_begin is an
 * ordinary sequential program. Started by `bsprun -n 1` its exit status is its own and
 * bsprun adds nothing to stderr; started by `bsprun -n 2` (more than one process) the
 * exit status is still the program's, and stderr says bsp_begin was never called.
 * Returns the number given as --status=N (default 0). */
#include "bsp.h"

int main(int argc, char** argv) {
  int status = 0;
  for (int i = 1; i < argc; ++i) {
    const char *arg = argv[i], *prefix = "--status=";
    int k = 0;
    while (prefix[k] && arg[k] == prefix[k]) ++k;
    if (prefix[k]) continue;
    for (const char* digit = arg + k; *digit >= '0' && *digit <= '9'; ++digit) status = 10 * status + (*digit - '0');
  }
  return status;
}
