#!/usr/bin/env python3
"""tools/compile_commands.py: turns `bazel aquery --output=jsonproto` of CppCompile actions
(stdin) into a compile_commands.json (stdout) for editors and clang tools.

Usage (tools/compile_commands.sh runs it): compile_commands.py WORKSPACE EXECROOT

Each entry runs in the workspace, so a file's path is the one an editor opens. Bazel's
arguments name paths relative to the execution root; those that exist only there
(bazel-out/, external/) are made absolute. One entry per source file (the first
configuration Bazel lists). GCC-only flags that clang rejects, and the dependency-file
flags (-MD -MF), are dropped.
"""
import json
import os
import sys

# Paths in Bazel's arguments that live under the execution root, not in the workspace.
EXECROOT_ONLY = ("bazel-out/", "external/")
# Flags GCC accepts and clang-based tools (clangd) reject as unknown.
GCC_ONLY = {"-fno-canonical-system-headers"}
# Flags that take the path in the next argument.
PATH_FLAGS = {"-iquote", "-isystem", "-I", "-o", "-include"}


def absolute(path, execroot):
    """path made absolute against the execution root when it lives only there."""
    if path.startswith(EXECROOT_ONLY):
        return os.path.join(execroot, path)
    return path


def rewrite(arguments, execroot):
    out = []
    follows_flag = False
    skip_next = False
    for arg in arguments:
        if skip_next:
            skip_next = False
            continue
        if arg in GCC_ONLY or arg == "-MD":
            continue
        if arg == "-MF":  # a tool re-running the command writes no dependency file
            skip_next = True
            continue
        if follows_flag:
            out.append(absolute(arg, execroot))
        elif arg.startswith(("-I", "-iquote", "-isystem")) and arg not in PATH_FLAGS:
            flag = next(f for f in ("-iquote", "-isystem", "-I") if arg.startswith(f))
            out.append(flag + absolute(arg[len(flag):], execroot))
        else:
            out.append(arg)
        follows_flag = arg in PATH_FLAGS
    return out


def source_of(arguments):
    """The file after -c (Bazel compiles one source per action), or None."""
    if "-c" in arguments:
        at = arguments.index("-c")
        if at + 1 < len(arguments):
            return arguments[at + 1]
    return None


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    workspace, execroot = sys.argv[1], sys.argv[2]
    query = json.load(sys.stdin)
    entries = {}
    for action in query.get("actions", []):
        arguments = action.get("arguments", [])
        source = source_of(arguments)
        if source is None or source.startswith(EXECROOT_ONLY) or source in entries:
            continue
        entries[source] = {
            "directory": workspace,
            "file": os.path.join(workspace, source),
            "arguments": rewrite(arguments, execroot),
        }
    json.dump(sorted(entries.values(), key=lambda e: e["file"]), sys.stdout, indent=1)
    sys.stdout.write("\n")
    print(f"compile_commands: {len(entries)} source files", file=sys.stderr)


if __name__ == "__main__":
    main()
