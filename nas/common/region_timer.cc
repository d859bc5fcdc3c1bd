// nas/common/region_timer.cc: timed region with the computation/communication split.
#include "nas/common/region_timer.h"

#include <cstdint>

#include "bsplib/bsp.h"
#include "bsplib/bsp_stats.h"

namespace nas {

void RegionTimer::start() {
  channel_at_start_ = bsp::stats::packets();
  communication_at_start_ = bsp::stats::communication_seconds();
  started_at_ = bsp_time();
}

void RegionTimer::stop() {
  seconds_ += bsp_time() - started_at_;
  communication_ += bsp::stats::communication_seconds() - communication_at_start_;
  bsp::stats::Packets region = bsp::stats::packets();
  region -= channel_at_start_;
  channel_ += region;
}

}  // namespace nas
