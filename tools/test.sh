#!/bin/sh
# tools/test.sh: the project's test command (README): installs what is missing, builds
# everything, runs every test once, one test binary at a time (they start many processes
# on few cores), and ends with the line "N passed, M failed" counted over test cases.
set -u
cd "$(dirname "$0")/.."
tools/setup.sh || exit 1
bazel test //... --local_test_jobs=1 --test_output=errors "$@"
status=$?
python3 tools/count_tests.py bazel-testlogs
counted=$?
[ $status -eq 0 ] && [ $counted -eq 0 ] && exit 0
exit 1
