#!/bin/sh
# tools/compile_commands.sh: writes compile_commands.json at the workspace root, for
# editors (clangd, ccls) and clang tools. Bazel 4 has no built-in for it: the compile
# commands come from `bazel aquery` (no build needed, except for generated headers, which
# appear after `bazel build`). Rerun after adding files or changing a BUILD file.
#   tools/compile_commands.sh [TARGET_PATTERN]   (default //...)
set -e
cd "$(dirname "$0")/.."
pattern=${1:-//...}
execroot=$(bazel info execution_root 2>/dev/null)
query=$(mktemp)
trap 'rm -f "$query" compile_commands.json.part' EXIT
bazel aquery "mnemonic(\"CppCompile\", $pattern)" --output=jsonproto > "$query"
python3 tools/compile_commands.py "$(pwd)" "$execroot" < "$query" > compile_commands.json.part
mv compile_commands.json.part compile_commands.json
echo "wrote $(pwd)/compile_commands.json"
