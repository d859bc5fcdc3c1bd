// recovery/clock.h: the time source the protocol core reads. The channel uses the steady
// clock; deterministic tests drive a manual one, so every timer (probe, NACK retry) runs
// without sleeps.
#pragma once

#include <chrono>

namespace bsp::recovery {

using Time = std::chrono::steady_clock::time_point;
using Duration = std::chrono::nanoseconds;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual Time now() const = 0;
};

class SteadyClock final : public Clock {
 public:
  Time now() const override { return std::chrono::steady_clock::now(); }
};

// Time moves only when the test says so.
class ManualClock final : public Clock {
 public:
  Time now() const override { return now_; }
  void advance(Duration by) { now_ += by; }

 private:
  Time now_{std::chrono::seconds(1000)};
};

}  // namespace bsp::recovery
