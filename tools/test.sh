#!/bin/sh
# tools/test.sh: the project's test command (README): installs what is missing, builds
# everything, runs every test once, one test binary at a time (they start many processes
# on few cores), and ends with the line "N passed, M failed" counted over test cases.
#   --loaded  the same under stress-ng keeping both cores busy for the whole run (a shared
#             CI runner or a busy login node): every test must pass there too.
#   --long    also the long tier: the targets tagged "long" (256 processes, the soak).
#   --quick   only the small and medium tests (unit tests, one transport or feature each):
#             a few minutes after the build, for a change's first check.
# Other arguments go to bazel test.
set -u
cd "$(dirname "$0")/.."
loaded=0
long=0
quick=0
for arg in "$@"; do
  case "$arg" in
    --loaded) loaded=1 ;;
    --long) long=1 ;;
    --quick) quick=1 ;;
  esac
done
# Drop our own flags, keep the rest for bazel.
for arg in "$@"; do
  shift
  case "$arg" in
    --loaded | --long | --quick) ;;
    *) set -- "$@" "$arg" ;;
  esac
done
tools/setup.sh || exit 1
targets="//..."
if [ $long -eq 1 ]; then
  # The long tier's targets are tagged manual too (so //... leaves them out): name them.
  targets="$targets $(bazel query 'attr(tags, "\blong\b", //...)' 2>/dev/null | tr '\n' ' ')"
fi
sizes=""
[ $quick -eq 1 ] && sizes="--test_size_filters=small,medium"
stress=""
if [ $loaded -eq 1 ]; then
  # One CPU hog per core (--cpu 0: as many as there are), for the whole run.
  stress-ng --cpu 0 --cpu-method matrixprod --quiet >/dev/null 2>&1 &
  stress=$!
  trap 'kill $stress 2>/dev/null; wait $stress 2>/dev/null' EXIT INT TERM
  echo "test.sh: running under stress-ng --cpu 0 (pid $stress) on $(nproc) cores"
fi
# shellcheck disable=SC2086  # $targets is a list of labels
bazel test $targets $sizes --local_test_jobs=1 --test_output=errors "$@"
status=$?
# The count below is over the tests that ran: say so when bazel stopped short of some.
[ $status -ne 0 ] && echo "test.sh: bazel test exited with $status: a target failed to build or a test did not run (above)"
python3 tools/count_tests.py bazel-testlogs
counted=$?
[ $status -eq 0 ] && [ $counted -eq 0 ] && exit 0
exit 1
