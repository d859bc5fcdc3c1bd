// bsplib/bsp_stats.cc: the statistics calls of bsp_stats.h.
#include "bsplib/bsp_stats.h"

#include <array>
#include <vector>

#include "bsplib/bsp.h"
#include "bsplib/runtime.h"

namespace bsp::stats {

double communication_seconds() { return Runtime::instance().engine("bsp::stats").communication_seconds(); }

recovery::ChannelStats channel() { return Runtime::instance().engine("bsp::stats").channel().stats(); }

recovery::ChannelStats channel_total() {
  constexpr std::size_t kFields = sizeof(recovery::ChannelStats) / sizeof(std::uint64_t);
  static_assert(sizeof(recovery::ChannelStats) == kFields * sizeof(std::uint64_t));
  const recovery::ChannelStats mine = channel();
  const int p = bsp_nprocs();
  std::vector<recovery::ChannelStats> all(static_cast<std::size_t>(p));
  bsp_push_reg(all.data(), static_cast<int>(all.size() * sizeof(recovery::ChannelStats)));
  bsp_sync();
  for (int peer = 0; peer < p; ++peer) {
    bsp_put(peer, &mine, all.data(), bsp_pid() * static_cast<int>(sizeof mine), sizeof mine);
  }
  bsp_sync();
  bsp_pop_reg(all.data());
  recovery::ChannelStats total;
  for (const recovery::ChannelStats& one : all) total += one;
  return total;
}

std::string transport_name() { return Runtime::instance().transport_name(); }

long supersteps() { return Runtime::instance().engine("bsp::stats").supersteps(); }

}  // namespace bsp::stats
