// bsp/bsp.hpp: the C++20 interface of this BSPlib: typed, checked, and inlined into the
// same engine calls as the C API (bsp.h), with which it mixes freely.
//
//   #include <bsp/bsp.hpp>
//   int main() {
//     return bsp::run(4, [](bsp::world& world) {
//       bsp::var<int> left(world);
//       left(world.next_rank()) = world.rank();
//       world.sync();
//       world.log("rank %d got %d", world.rank(), left.value());
//     });
//   }
//
// world.hpp: bsp::run, bsp::world; var.hpp: bsp::var; future.hpp: bsp::future;
// coarray.hpp: bsp::coarray; queue.hpp: bsp::queue; algorithms.hpp: gather_all, fold,
// scan, broadcast, all_to_all, sort; partitioning.hpp: block, cyclic, block-cyclic,
// cartesian. `man bsp.hpp` describes them all.
#pragma once

#include <bsp/algorithms.hpp>
#include <bsp/coarray.hpp>
#include <bsp/future.hpp>
#include <bsp/partitioning.hpp>
#include <bsp/queue.hpp>
#include <bsp/var.hpp>
#include <bsp/world.hpp>
