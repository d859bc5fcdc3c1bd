// tests/nas/bt/bt_multi_partition_test.cc: invariants of BT's multi-partition
// decomposition: the cells of all processes tile the grid exactly; along every axis each
// line of cells holds one cell of every process, in stage order; the neighbour process
// and cell index it names really own the adjacent cell; non-square counts are refused.
#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "nas/bt/multi_partition.h"

namespace {

using nas::bt::MultiPartition;

class MultiPartitionTest : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(MultiPartitionTest, CellsTileTheGridAndNeighboursMatch) {
  const auto [p, n] = GetParam();
  std::vector<MultiPartition> all;
  for (int pid = 0; pid < p; ++pid) all.emplace_back(p, pid, n);
  const int q = all[0].q();
  ASSERT_EQ(q * q, p);
  // Owner of each cell coordinate triple.
  std::map<std::tuple<int, int, int>, std::pair<int, int>> owner;
  std::vector<int> covered(std::size_t(n) * n * n, 0);
  for (int pid = 0; pid < p; ++pid)
    for (int c = 0; c < q; ++c) {
      const auto cc = all[pid].coords(pid, c);
      EXPECT_TRUE(owner.emplace(std::make_tuple(cc[0], cc[1], cc[2]), std::make_pair(pid, c)).second);
      const auto e = all[pid].extent(c);
      for (int k = 0; k < e.size[2]; ++k)
        for (int j = 0; j < e.size[1]; ++j)
          for (int i = 0; i < e.size[0]; ++i)
            ++covered[(std::size_t(e.start[2] + k) * n + e.start[1] + j) * n + e.start[0] + i];
    }
  EXPECT_EQ(int(owner.size()), q * q * q);
  for (int v : covered) ASSERT_EQ(v, 1);
  for (int pid = 0; pid < p; ++pid)
    for (int axis = 0; axis < 3; ++axis) {
      // Stage s is the cell at coordinate s along the axis.
      for (int s = 0; s < q; ++s) EXPECT_EQ(all[pid].coords(pid, all[pid].cell_at_stage(axis, s))[axis], s);
      for (int c = 0; c < q; ++c)
        for (int side = -1; side <= 1; side += 2) {
          auto cc = all[pid].coords(pid, c);
          cc[axis] += side;
          if (cc[axis] < 0 || cc[axis] >= q) continue;
          const auto [owner_pid, owner_cell] = owner.at(std::make_tuple(cc[0], cc[1], cc[2]));
          EXPECT_EQ(all[pid].neighbour(axis, side), owner_pid);
          EXPECT_EQ(all[pid].neighbour_cell(axis, side, c), owner_cell);
          // Faces match: same extent across the other two axes.
          const auto mine = all[pid].extent(c), theirs = all[owner_pid].extent(owner_cell);
          for (int a = 0; a < 3; ++a)
            if (a != axis) {
              EXPECT_EQ(mine.start[a], theirs.start[a]);
              EXPECT_EQ(mine.size[a], theirs.size[a]);
            }
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Sizes, MultiPartitionTest,
                         ::testing::Values(std::make_tuple(1, 12), std::make_tuple(4, 12), std::make_tuple(9, 12),
                                           std::make_tuple(16, 12), std::make_tuple(9, 64), std::make_tuple(16, 102)));

TEST(MultiPartition, RefusesNonSquareCountsAndTinyCells) {
  EXPECT_THROW(MultiPartition(2, 0, 12), std::invalid_argument);
  EXPECT_THROW(MultiPartition(8, 0, 12), std::invalid_argument);
  EXPECT_THROW(MultiPartition(49, 0, 12), std::invalid_argument);
}

}  // namespace
