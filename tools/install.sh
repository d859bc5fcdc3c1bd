#!/bin/sh
# tools/install.sh: installs bsprun, bspcc, bspprof, bsp.h, bsp/bsp.hpp (C++), the library, a
# pkg-config file and the manual pages (every page of //docs/man:pages, by section) under PREFIX.
# Run through Bazel, which builds what it copies: `bazel run //:install -- PREFIX`.
set -e
if [ $# -ne 1 ]; then echo "usage: bazel run //:install -- PREFIX (got $# arguments: $*)" >&2; exit 2; fi
prefix=$1
case "$prefix" in /*) ;; *) prefix="${BUILD_WORKING_DIRECTORY:-$PWD}/$prefix" ;; esac
here=$(pwd)  # the runfiles tree of //:install
mkdir -p "$prefix/bin" "$prefix/include" "$prefix/lib/pkgconfig"
# (cp, not install(1): inside Bazel's runfiles tree `install` may be this very target)
copy() { rm -f "$3"; cp "$2" "$3"; chmod "$1" "$3"; }
copy 755 "$here/bsplib/bsprun" "$prefix/bin/bsprun"
copy 755 "$here/bsplib/bspcc.sh" "$prefix/bin/bspcc"
copy 755 "$here/tools/bspprof/bspprof" "$prefix/bin/bspprof"
copy 644 "$here/bsplib/bsp.h" "$prefix/include/bsp.h"
copy 644 "$here/bsplib/bsp_level1.h" "$prefix/include/bsp_level1.h"
# The C++ interface: #include <bsp/bsp.hpp> (bspcc compiles C++ as C++20).
mkdir -p "$prefix/include/bsp"
for header in "$here"/bsplib/cpp/bsp/*; do copy 644 "$header" "$prefix/include/bsp/$(basename "$header")"; done
copy 755 "$here/bsplib/libbsplib.so" "$prefix/lib/libbsp.so"
# Manual pages: whatever //docs/man:pages holds, each into the directory of its section.
for page in "$here"/docs/man/man[1-9]/*.[1-9]; do
  section=$(basename "$(dirname "$page")")
  mkdir -p "$prefix/share/man/$section"
  copy 644 "$page" "$prefix/share/man/$section/$(basename "$page")"
done
cat > "$prefix/lib/pkgconfig/bsp.pc" <<PC
prefix=$prefix
includedir=\${prefix}/include
libdir=\${prefix}/lib

Name: bsplib
Description: BSPlib with pluggable transports (tcp, udp, nic)
Version: 0.1
Cflags: -I\${includedir}
Libs: -L\${libdir} -Wl,-rpath,\${libdir} -lbsp
PC
echo "installed bsprun, bspcc, bspprof, bsp.h, bsp/bsp.hpp, libbsp.so, bsp.pc and the manual pages under $prefix"
echo "(MANPATH=$prefix/share/man man bsp_put; or add $prefix/share/man to MANPATH)"
