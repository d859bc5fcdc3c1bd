// nas/common/region_timer.h: times the benchmark's timed region on one process and splits
// it as paper 001's Table 2 does: communication = time spent inside BSPlib calls (above
// all bsp_sync, which includes waiting for the others), computation = the rest. It also
// keeps the difference of the reliable layer's packet counters over the region.
// Local (not collective); call bsp_sync() just before start() so processes start together.
#pragma once

#include "bsplib/bsp_stats.h"

namespace nas {

class RegionTimer {
 public:
  // Starts (or restarts) the region: records bsp_time, BSPlib time and packet counters.
  void start();
  // Ends the region; may be followed by another start()/stop() pair that accumulates.
  void stop();

  // Wall-clock seconds of the region(s).
  double seconds() const { return seconds_; }
  // Seconds inside BSPlib calls during the region(s).
  double communication_seconds() const { return communication_; }
  // seconds() - communication_seconds().
  double computation_seconds() const { return seconds_ - communication_; }
  // Packet counters of this process accumulated over the region(s).
  const bsp::stats::Packets& channel() const { return channel_; }

 private:
  double started_at_ = 0, communication_at_start_ = 0;
  bsp::stats::Packets channel_at_start_;
  double seconds_ = 0, communication_ = 0;
  bsp::stats::Packets channel_;
};

}  // namespace nas
