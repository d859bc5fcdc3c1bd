// recovery/rtt_estimator.h: smoothed round trip and the retry interval derived from it
// (RFC 6298 smoothing, clamped and backed off as recovery/protocol_constants.h says).
// Samples come from probe stamps echoed by the peer and from acks of frames sent once.
#pragma once

#include <algorithm>

#include "recovery/clock.h"
#include "recovery/protocol_constants.h"

namespace bsp::recovery {

class RttEstimator {
 public:
  void sample(Duration rtt) {
    if (rtt.count() <= 0) rtt = Duration(1);
    if (!sampled_) {
      srtt_ = rtt;
      rttvar_ = rtt / 2;
      sampled_ = true;
      return;
    }
    Duration error = rtt > srtt_ ? rtt - srtt_ : srtt_ - rtt;
    rttvar_ = (3 * rttvar_ + error) / 4;
    srtt_ = (7 * srtt_ + rtt) / 8;
  }

  Duration srtt() const { return srtt_; }

  // How long to wait for an answer before asking again, after `backoff` unanswered tries.
  Duration retry_interval(int backoff = 0) const {
    Duration base = std::clamp<Duration>(2 * srtt_ + 4 * rttvar_, tuning::kMinRetry, tuning::kMaxRetry);
    int shift = std::clamp(backoff, 0, tuning::kMaxBackoffShift);
    return std::min<Duration>(base * (1 << shift), std::max(base, tuning::kMaxBackedOff));
  }

 private:
  bool sampled_ = false;
  Duration srtt_ = tuning::kInitialRtt;
  Duration rttvar_ = tuning::kInitialRtt / 2;
};

}  // namespace bsp::recovery
