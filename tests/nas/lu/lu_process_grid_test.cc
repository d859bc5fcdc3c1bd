// tests/nas/lu/lu_process_grid_test.cc: LU's 2-D process grid: the px x py shapes for
// powers of two, blocks that tile the grid exactly, neighbours, and the refusals (a
// count that is not a power of two, blocks thinner than the ghost layers).
#include <gtest/gtest.h>

#include <stdexcept>

#include "nas/lu/process_grid.h"
#include "nas/lu/wavefront.h"

namespace {

using nas::lu::ProcessGrid;

TEST(LuProcessGrid, ShapesForPowersOfTwo) {
  const int expected[][3] = {{1, 1, 1}, {2, 2, 1}, {4, 2, 2}, {8, 4, 2}, {16, 4, 4}};
  for (const auto& e : expected) {
    const ProcessGrid grid(e[0], 0, 64, 64);
    EXPECT_EQ(grid.px(), e[1]) << e[0] << " processes";
    EXPECT_EQ(grid.py(), e[2]) << e[0] << " processes";
  }
}

TEST(LuProcessGrid, BlocksTileTheGrid) {
  for (int p : {1, 2, 4, 8, 16}) {
    for (int n : {12, 33, 64, 102}) {
      std::vector<int> owner(n * n, 0);
      for (int pid = 0; pid < p; ++pid) {
        const ProcessGrid grid(p, pid, n, n);
        EXPECT_GE(grid.x_count(), 2);
        EXPECT_GE(grid.y_count(), 2);
        for (int j = grid.y_first(); j < grid.y_first() + grid.y_count(); ++j)
          for (int i = grid.x_first(); i < grid.x_first() + grid.x_count(); ++i) ++owner[j * n + i];
      }
      for (int v : owner) ASSERT_EQ(v, 1) << p << " processes, n = " << n;
    }
  }
}

TEST(LuProcessGrid, NeighboursAreOneStepAway) {
  const ProcessGrid grid(8, 5, 64, 64);  // 4 x 2 grid, pid 5 = (1, 1)
  EXPECT_EQ(grid.cx(), 1);
  EXPECT_EQ(grid.cy(), 1);
  EXPECT_EQ(grid.x_low(), 4);
  EXPECT_EQ(grid.x_high(), 6);
  EXPECT_EQ(grid.y_low(), 1);
  EXPECT_EQ(grid.y_high(), -1);
}

TEST(LuProcessGrid, RefusesWhatItCannotSplit) {
  EXPECT_THROW(ProcessGrid(3, 0, 64, 64), std::invalid_argument);
  EXPECT_THROW(ProcessGrid(6, 0, 64, 64), std::invalid_argument);
  EXPECT_THROW(ProcessGrid(64, 0, 12, 12), std::invalid_argument);  // 8 x 8 over 12 points
}

TEST(LuWavefront, BlocksCoverTheInteriorPlanes) {
  for (int p : {1, 2, 4, 8, 16}) {
    const ProcessGrid grid(p, 0, 64, 64);
    for (int k : {0, 1, 5, 62, 100}) {
      const nas::lu::Wavefront w(grid, 64, k);
      EXPECT_GE(w.blocks() * w.planes_per_block(), 62);
      EXPECT_LT((w.blocks() - 1) * w.planes_per_block(), 62);
      EXPECT_EQ(w.supersteps_per_sweep(), w.blocks() + grid.px() + grid.py() - 2);
    }
  }
}

// A core per process: the default pipeline is as fine as keeps 4096 points of work per
// superstep (never coarser than the shared-core default); more processes than cores:
// coarse, a few full supersteps.
TEST(LuWavefront, DefaultBlocksFollowTheCores) {
  using nas::lu::Wavefront;
  const ProcessGrid two(2, 0, 64, 64), four(4, 0, 64, 64), one(1, 0, 64, 64);
  EXPECT_EQ(Wavefront(two, 64, 0, 2).planes_per_block(), 2);  // 32 x 64 points a plane
  EXPECT_EQ(Wavefront(two, 64, 0, 2).supersteps_per_sweep(), 32);
  EXPECT_EQ(Wavefront(four, 64, 0, 8).planes_per_block(), 4);                       // 32 x 32
  EXPECT_EQ(Wavefront(ProcessGrid(2, 1, 33, 33), 33, 0, 2).planes_per_block(), 8);  // class W: as shared
  EXPECT_EQ(Wavefront(two, 64, 0, 1).planes_per_block(), 16);                       // 4 blocks
  EXPECT_EQ(Wavefront(four, 64, 0, 2).planes_per_block(), 16);                      // 4 blocks
  EXPECT_EQ(Wavefront(four, 64, 0, 0).planes_per_block(), 16);                      // cores unknown
  EXPECT_EQ(Wavefront(one, 64, 0, 2).blocks(), 1);                                  // no pipeline at all
  EXPECT_EQ(Wavefront(two, 64, 8, 2).planes_per_block(), 8);                        // --kblock wins
}

}  // namespace
