#!/bin/sh
# tests/cpp/compile_fail_test.sh: each misuse of the C++ interface that the compiler can
# see must not compile, and must say why in the interface's own words (static_assert).
# Runs the host C++ compiler ($CXX, default g++) on small snippets against bsp.hpp.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
cxx=${CXX:-g++}
command -v "$cxx" >/dev/null 2>&1 || { echo "SKIP: no C++ compiler ($cxx)"; exit 0; }
dir=${TEST_TMPDIR:-$(mktemp -d)}
failed=0
# check NAME MESSAGE BODY: BODY (statements inside a bsp::run lambda with `world`) must
# fail to compile with MESSAGE in the compiler's output.
check() {
  name=$1 message=$2 body=$3
  cat > "$dir/$name.cc" <<CC
#include <bsp/bsp.hpp>
#include <string>
#include <vector>
int main() {
  return bsp::run(2, [](bsp::world& world) {
    $body
  });
}
CC
  if "$cxx" -std=c++20 -fsyntax-only -I"$here/bsplib" -I"$here/bsplib/cpp" "$dir/$name.cc" > "$dir/$name.out" 2>&1; then
    echo "FAIL: $name compiled"
    failed=1
  elif grep -qF "$message" "$dir/$name.out"; then
    echo "ok: $name: $message"
  else
    echo "FAIL: $name: the compiler did not say \"$message\":"
    head -20 "$dir/$name.out"
    failed=1
  fi
}
# The same snippets, correct, must compile (so the harness cannot pass by always failing).
check_ok() {
  name=$1 body=$2
  printf '#include <bsp/bsp.hpp>\n#include <string>\n#include <vector>\nint main() {\n  return bsp::run(2, [](bsp::world& world) {\n%s\n  });\n}\n' "$body" > "$dir/$name.cc"
  if "$cxx" -std=c++20 -fsyntax-only -I"$here/bsplib" -I"$here/bsplib/cpp" "$dir/$name.cc" > "$dir/$name.out" 2>&1; then
    echo "ok: $name compiles"
  else
    echo "FAIL: $name did not compile:"
    head -20 "$dir/$name.out"
    failed=1
  fi
}

check_ok correct_uses 'bsp::var<int> x(world); x(1) = 3; auto f = x(1).get();
  bsp::coarray<double> xs(world, 4); xs(1)[0] = 1.5; std::vector<double> v(2); xs(1)[{0, 2}] = v;
  bsp::queue<int, std::string> q(world); q(1).send(1, std::string("a")); world.sync(); (void)f.value();'
check var_of_string "bsp::var<T>: T must be trivially copyable" 'bsp::var<std::string> x(world);'
check coarray_of_vector "bsp::coarray<T>: T must be trivially copyable" 'bsp::coarray<std::vector<int>> xs(world, 3);'
check queue_of_nested "bsp::queue<Ts...>: every component must be trivially copyable" \
  'bsp::queue<std::vector<std::string>> q(world);'
check var_wrong_type "bsp::var<T>: the value put must be of the variable's type T" \
  'bsp::var<int> x(world); x(1) = "text";'
check coarray_wrong_element "bsp::coarray<T>: the element put must be of the coarray's element type T" \
  'bsp::coarray<int> xs(world, 4); xs(1)[0] = std::string("x");'
check slice_wrong_element "bsp::coarray<T>: a slice put takes a std::span<const T>" \
  'bsp::coarray<int> xs(world, 4); std::vector<double> v(2); xs(1)[{0, 2}] = v;'
check future_wrong_type "bsp::future<T>: this get() returns a bsp::future of the variable's own type" \
  'bsp::var<int> x(world); bsp::future<float> f = x(1).get();'
check queue_wrong_arguments "bsp::queue<Ts...>: send takes one value per component" \
  'bsp::queue<int, double> q(world); q(1).send(1);'
check gather_non_trivial "bsp::gather_all<T>: T must be trivially copyable" \
  'auto all = bsp::gather_all(world, std::string("x"));'
exit $failed
