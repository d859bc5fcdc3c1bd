#!/bin/sh
# bspcc: compiles and links C or C++ BSPlib programs against this installation, like the
# Oxford BSP toolset's bspcc: `bspcc -O2 prog.c -o prog`, then `bsprun -n 4 ./prog`.
# C++ sources (.cc .cpp .cxx .C) use $BSP_CXX (default g++), others $BSP_CC (default gcc);
# C++ is compiled as C++20 unless a -std= option says otherwise (the C++ interface,
# #include <bsp/bsp.hpp>, needs it).
#
# The Oxford toolset's own options are understood and never passed to the compiler
# (Makefiles written for it, e.g. BSPedupack's `-flibrary-level 2 -bspfifo 10000
# -fcombine-puts -fcombine-puts-buffer 256K,128M,4K`, work unchanged):
#   -flibrary-level N     run-time checking level (BSP_LIBRARY_LEVEL): 0 full checking,
#                         1 default, 2 fast path (docs/DESIGN.md says what each keeps)
#   -device NAME          default transport of the program (BSP_TRANSPORT): tcp, udp, nic,
#                         or Oxford's device names (MPASS_TCPIP -> tcp, MPASS_UDPIP -> udp,
#                         NIC -> nic)
#   -stat                 print the statistics at the end by default (BSP_STATS=1)
#   -fcombine-puts        adjacent puts travel as one record (BSP_COMBINE_PUTS=1; on by
#                         default anyway)
#   -prof, -cgprof        profile every superstep by default (BSP_PROFILE=PROG.prof, PROG the
#                         program's name; `bspprof PROG.prof` draws it; bsprun --profile=FILE
#                         or BSP_PROFILE= choose another file or none)
#   -fcombine-puts-buffer X, -bspfifo N, -bspbuffer N, -bspnobuffers N,
#   -bspslotsize N, -bsproundtrip N, -bspsendlatency N, -bspbuffer-stalls N,
#   -fcontention-resolve N, -fthrottle-procs N, -fcheck-syncs, -fno-check-syncs,
#   -fprofile, -overridechecks
#                         accepted; one note per compile lists those given (none with
#                         BSPCC_QUIET=1): our library packs puts into frames always,
#                         sizes its buffers itself and checks syncs always
# The defaults set by -flibrary-level, -device, -stat and -prof are compiled into the program (a
# constructor that sets the BSP_* variable unless the environment already does).
# Extra: --show prints the command instead of running it.
set -e
prefix=$(cd "$(dirname "$0")/.." && pwd)
driver=${BSP_CC:-gcc}
show=0
linking=1
cxx=0
std_given=0
defaults=""   # lines of C: setenv calls for the program's defaults
args=""
quote() { printf "'%s'" "$(printf %s "$1" | sed "s/'/'\\\\''/g")"; }
note() { echo "bspcc: $1" >&2; }
default() { defaults="$defaults setenv(\"$1\", \"$2\", 0);"; }
device() {
  case "$1" in
    tcp|MPASS_TCPIP|TCPIP) default BSP_TRANSPORT tcp ;;
    udp|MPASS_UDPIP|UDPIP) default BSP_TRANSPORT udp ;;
    nic|NIC|MPASS_3C905B) default BSP_TRANSPORT nic ;;
    *) note "unknown -device $1 (use tcp, udp or nic)"; exit 2 ;;
  esac
}
level() {
  case "$1" in
    0|1|2) default BSP_LIBRARY_LEVEL "$1" ;;
    *) note "-flibrary-level takes 0, 1 or 2 (got '$1')"; exit 2 ;;
  esac
}
ignored_list=""  # "option (why), ...": one note for the whole compile, not one per option
ignored() { ignored_list="${ignored_list:+$ignored_list, }$1 ($2)"; }
while [ $# -gt 0 ]; do
  arg=$1
  shift
  case "$arg" in
    --show) show=1; continue ;;
    -flibrary-level=*) level "${arg#*=}"; continue ;;
    -flibrary-level) level "${1:-}"; shift; continue ;;
    -device=*) device "${arg#*=}"; continue ;;
    -device) device "${1:-}"; shift; continue ;;
    -stat) default BSP_STATS 1; continue ;;
    -fcombine-puts) default BSP_COMBINE_PUTS 1; continue ;;
    -fcombine-puts-buffer=*) ignored "$arg" "buffers grow as needed"; continue ;;
    -fcombine-puts-buffer|-bspfifo|-bspbuffer|-bspnobuffers|-bspslotsize|-bsproundtrip|-bspsendlatency|\
    -bspbuffer-stalls|-fcontention-resolve|-fthrottle-procs)
      ignored "$arg ${1:-}" "buffers, fifos and schedules are sized at run time"; shift; continue ;;
    -bspfifo=*|-bspbuffer=*|-bspnobuffers=*|-bspslotsize=*|-bsproundtrip=*|-bspsendlatency=*|-fcontention-resolve=*)
      ignored "$arg" "buffers, fifos and schedules are sized at run time"; continue ;;
    -fcheck-syncs|-fno-check-syncs|-overridechecks) ignored "$arg" "mismatched syncs are always detected"; continue ;;
    -prof|-cgprof) default BSP_PROFILE "%e.prof"; continue ;;
    -fprofile) ignored "$arg" "use -prof (superstep profile) or bsprun --stats for counters"; continue ;;
    -c|-S|-E|-M|-MM) linking=0 ;;
    *.cc|*.cpp|*.cxx|*.C|*.c++) driver=${BSP_CXX:-g++}; cxx=1 ;;
    -std=*) std_given=1 ;;
  esac
  args="$args $(quote "$arg")"
done
extra=""
if [ -n "$defaults" ] && [ "$linking" = 1 ]; then
  dir=$(mktemp -d "${TMPDIR:-/tmp}/bspcc.XXXXXX")
  trap 'rm -rf "$dir"' EXIT
  cat > "$dir/bspcc_defaults.c" <<C
/* Written by bspcc: this program's defaults for BSPlib run-time options. */
#include <stdlib.h>
__attribute__((constructor)) static void bspcc_defaults(void) {$defaults }
C
  extra=" -x none $(quote "$dir/bspcc_defaults.c")"
fi
if [ -n "$ignored_list" ] && [ -z "${BSPCC_QUIET:-}" ]; then
  note "Oxford toolset options with no effect here, ignored: $ignored_list"
fi
std=""
if [ "$cxx" = 1 ] && [ "$std_given" = 0 ]; then std=" -std=c++20"; fi
command="$driver$std -I'$prefix/include'$args$extra -L'$prefix/lib' -Wl,-rpath,'$prefix/lib' -lbsp"
if [ "$show" = 1 ]; then echo "$command"; exit 0; fi
eval "$command"
