// tests/nas/sp/sp_multipartition_test.cc: the multi-partition decomposition: every cell of
// the grid is owned exactly once, every slab of cells along every axis holds one cell of
// every process, the axis successor owns the next cell of each of a process's cells, and
// non-square process counts are refused.
#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <tuple>

#include "nas/sp/multipartition.h"

namespace {

using nas::sp::Multipartition;

TEST(Multipartition, RefusesNonSquareCounts) {
  EXPECT_THROW(Multipartition(2, 0, 12), std::invalid_argument);
  EXPECT_THROW(Multipartition(8, 0, 12), std::invalid_argument);
  EXPECT_NO_THROW(Multipartition(9, 0, 12));
}

TEST(Multipartition, RefusesCellsThinnerThanTwoPoints) {
  EXPECT_THROW(Multipartition(49, 0, 12), std::invalid_argument);
}

class Layout : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(Layout, CellsTileTheGridAndSlabsHoldEveryProcess) {
  const auto [p, n] = GetParam();
  std::map<std::array<int, 3>, int> owner;  // cell coordinate -> pid
  int points = 0;
  for (int pid = 0; pid < p; ++pid) {
    Multipartition mp(p, pid, n);
    for (const auto& c : mp.cells()) {
      EXPECT_TRUE(owner.emplace(c.coord, pid).second) << "cell owned twice";
      points += c.size[0] * c.size[1] * c.size[2];
    }
  }
  EXPECT_EQ(points, n * n * n);
  const int q = Multipartition(p, 0, n).q();
  EXPECT_EQ(int(owner.size()), q * q * q);
  for (int pid = 0; pid < p; ++pid) {
    Multipartition mp(p, pid, n);
    for (int axis = 0; axis < 3; ++axis)
      for (int s = 0; s < q; ++s) {
        const auto& cell = mp.cells()[mp.cell_at(axis, s)];
        EXPECT_EQ(cell.coord[axis], s);
        if (s + 1 < q) {
          auto next = cell.coord;
          next[axis] += 1;
          EXPECT_EQ(owner[next], mp.successor(axis));
          Multipartition succ(p, mp.successor(axis), n);
          EXPECT_EQ(succ.predecessor(axis), pid);
        }
      }
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, Layout,
                         ::testing::Values(std::make_tuple(1, 12), std::make_tuple(4, 12), std::make_tuple(9, 12),
                                           std::make_tuple(16, 36), std::make_tuple(9, 64)));

}  // namespace
