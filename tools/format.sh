#!/bin/sh
# tools/format.sh: runs clang-format (.clang-format at the root) on C and C++ sources.
# The whole tree is formatted (CI runs --check --all); by default only the lines you changed
# are formatted: those that differ between the working tree and a base revision
# ($FORMAT_BASE, else the merge base of HEAD and main). Named files, or --all, are
# formatted whole (git clang-format sees only tracked files: git add a new file first, or
# name it). third_party/ is never touched.
#
#   tools/format.sh                 format the lines changed since the base
#   tools/format.sh --check         change nothing; show the diff, exit 1 if any
#   tools/format.sh [--check] FILE...   the same for these whole files
#   tools/format.sh [--check] --all     every tracked C/C++ file (whole)
set -e
cd "$(dirname "$0")/.."

check=0
all=0
for arg in "$@"; do
  case "$arg" in
    --check) check=1 ;;
    --all) all=1 ;;
    -h | --help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "tools/format.sh: unknown option $arg (see --help)" >&2; exit 2 ;;
  esac
done
for arg in "$@"; do
  shift
  case "$arg" in -*) ;; *) set -- "$@" "$arg" ;; esac
done

if ! command -v clang-format >/dev/null 2>&1; then
  echo "tools/format.sh: clang-format is not installed (tools/setup.sh installs it)" >&2
  exit 2
fi

sources() {  # tracked C and C++ files outside third_party/
  git ls-files -- '*.c' '*.cc' '*.h' '*.hpp' ':(exclude)third_party/*'
}

if [ "$all" = 1 ] || [ $# -gt 0 ]; then
  [ "$all" = 1 ] && set -- $(sources)
  if [ "$check" = 1 ]; then
    status=0
    for file in "$@"; do
      clang-format --style=file "$file" | diff -u --label "a/$file" --label "b/$file" "$file" - || status=1
    done
    exit $status
  fi
  exec clang-format --style=file -i "$@"
fi

base=${FORMAT_BASE:-}
if [ -z "$base" ]; then
  base=$(git merge-base HEAD main 2>/dev/null || git rev-parse HEAD)
fi
if [ "$check" = 1 ]; then
  # Prints the diff and exits 1 when a changed line is not formatted (git clang-format
  # itself exits 0 either way).
  out=$(git clang-format --style=file --extensions=c,cc,h --diff "$base" -- ':(exclude)third_party')
  case "$out" in
    *"diff --git"*) printf '%s\n' "$out"; echo "tools/format.sh: run tools/format.sh to format these lines" >&2; exit 1 ;;
  esac
else
  # --force: the files may have unstaged changes; the formatted result is built from them.
  git clang-format --style=file --extensions=c,cc,h --force "$base" -- ':(exclude)third_party' || [ $? -eq 1 ]
fi
