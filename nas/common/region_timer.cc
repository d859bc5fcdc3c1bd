// nas/common/region_timer.cc: timed region with the computation/communication split.
#include "nas/common/region_timer.h"

#include <cstdint>

#include "bsplib/bsp.h"
#include "bsplib/bsp_stats.h"

namespace nas {

bsp::recovery::ChannelStats channel_difference(const bsp::recovery::ChannelStats& later,
                                               const bsp::recovery::ChannelStats& earlier) {
  bsp::recovery::ChannelStats out = later;
  out -= earlier;
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
