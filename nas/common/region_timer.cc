// nas/common/region_timer.cc: timed region with the computation/communication split.
#include "nas/common/region_timer.h"

#include <cstdint>

#include "bsplib/bsp.h"
#include "bsplib/bsp_stats.h"

namespace nas {

namespace {

// ChannelStats is a plain struct of uint64 counters; walk it as an array.
constexpr int kCounters = sizeof(bsp::recovery::ChannelStats) / sizeof(std::uint64_t);
static_assert(sizeof(bsp::recovery::ChannelStats) == kCounters * sizeof(std::uint64_t));

}  // namespace

bsp::recovery::ChannelStats channel_difference(const bsp::recovery::ChannelStats& later,
                                               const bsp::recovery::ChannelStats& earlier) {
  bsp::recovery::ChannelStats out;
  auto* o = reinterpret_cast<std::uint64_t*>(&out);
  const auto* l = reinterpret_cast<const std::uint64_t*>(&later);
  const auto* e = reinterpret_cast<const std::uint64_t*>(&earlier);
  for (int i = 0; i < kCounters; ++i) o[i] = l[i] - e[i];
  return out;
}

void RegionTimer::start() {
  channel_at_start_ = bsp::stats::channel();
  communication_at_start_ = bsp::stats::communication_seconds();
  started_at_ = bsp_time();
}

void RegionTimer::stop() {
  seconds_ += bsp_time() - started_at_;
  communication_ += bsp::stats::communication_seconds() - communication_at_start_;
  channel_ += channel_difference(bsp::stats::channel(), channel_at_start_);
}

}  // namespace nas
