// tests/nas/mg_process_grid_test.cc: MG's 3-D process grid: how 1, 2, 4 and 8 processes
// split the directions (z first, then y, then x), that every pid gets distinct
// coordinates and block offsets covering the grid, that neighbours are periodic, and
// that process counts the coarsest level cannot take are refused.
#include <gtest/gtest.h>

#include <array>
#include <set>
#include <stdexcept>

#include "nas/mg/process_grid.h"

namespace {

using nas::mg::ProcessGrid;

TEST(ProcessGrid, SplitsSlowestDirectionsFirst) {
  const std::array<std::array<int, 3>, 4> expected = {{{1, 1, 1}, {1, 1, 2}, {1, 2, 2}, {2, 2, 2}}};
  for (int k = 0; k < 4; ++k) {
    ProcessGrid grid(1 << k, 0, 2);
    for (int d = 0; d < 3; ++d) EXPECT_EQ(grid.extent(d), expected[k][d]) << "p=" << (1 << k) << " d=" << d;
  }
}

TEST(ProcessGrid, BlocksTileTheGrid) {
  const int p = 8, n = 32;
  std::set<std::array<int, 3>> firsts;
  for (int pid = 0; pid < p; ++pid) {
    ProcessGrid grid(p, pid, 2);
    std::array<int, 3> first{};
    for (int d = 0; d < 3; ++d) {
      EXPECT_EQ(grid.local_points(d, n), n / grid.extent(d));
      first[d] = grid.first_point(d, n);
      EXPECT_EQ(first[d] % grid.local_points(d, n), 0);
      EXPECT_LT(first[d], n);
    }
    firsts.insert(first);
  }
  EXPECT_EQ(firsts.size(), std::size_t(p));
}

TEST(ProcessGrid, NeighboursArePeriodic) {
  ProcessGrid grid(4, 0, 2);                   // 1 x 2 x 2: pid = y + 2 z
  EXPECT_EQ(grid.neighbour_at({1, 0, 0}), 0);  // x is not split: itself
  EXPECT_EQ(grid.neighbour_at({0, 1, 0}), 1);
  EXPECT_EQ(grid.neighbour_at({0, -1, 0}), 1);  // two along y: both sides are the same
  EXPECT_EQ(grid.neighbour_at({0, 0, 1}), 2);
  EXPECT_EQ(grid.neighbour_at({-1, 1, -1}), 3);
}

TEST(ProcessGrid, RefusesCountsItCannotSplit) {
  EXPECT_THROW(ProcessGrid(3, 0, 2), std::invalid_argument);
  EXPECT_THROW(ProcessGrid(16, 0, 2), std::invalid_argument);
  EXPECT_THROW(ProcessGrid(0, 0, 2), std::invalid_argument);
}

}  // namespace
