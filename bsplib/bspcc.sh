#!/bin/sh
# bspcc: compiles and links C or C++ BSPlib programs against this installation, like the
# Oxford BSP toolset's bspcc: `bspcc -O2 prog.c -o prog`, then `bsprun -n 4 ./prog`.
# C++ sources (.cc .cpp .cxx .C) use $BSP_CXX (default g++), others $BSP_CC (default gcc).
# Extra: --show prints the command instead of running it.
set -e
prefix=$(cd "$(dirname "$0")/.." && pwd)
driver=${BSP_CC:-gcc}
show=0
for arg in "$@"; do
  case "$arg" in
    *.cc|*.cpp|*.cxx|*.C|*.c++) driver=${BSP_CXX:-g++} ;;
    --show) show=1 ;;
  esac
done
set -- "$@"
args=""
for arg in "$@"; do
  [ "$arg" = "--show" ] && continue
  args="$args '$(printf %s "$arg" | sed "s/'/'\\\\''/g")'"
done
command="$driver -I'$prefix/include'$args -L'$prefix/lib' -Wl,-rpath,'$prefix/lib' -lbsp"
if [ "$show" = 1 ]; then echo "$command"; exit 0; fi
eval "exec $command"
