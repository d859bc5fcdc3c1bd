// examples/cpp/hello.cc: every process says hello through world.log (printed by rank 0,
// in rank order, at the sync), and greets its right neighbour with a put.
// Usage: bsprun -n 4 ./hello   (or ./hello: as many processes as processors)
#include <bsp/bsp.hpp>

int main(int argc, char** argv) {
  return bsp::run(argc, argv, [](bsp::world& world) {
    world.log("hello from rank %d of %d", world.rank(), world.size());
    bsp::var<int> left(world);  // collective: registered and usable at once
    left(world.next_rank()) = world.rank();
    world.sync();
    world.log("rank %d heard from rank %d", world.rank(), left.value());
  });
}
