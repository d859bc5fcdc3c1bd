// recovery/wake_slice.cc: asks for a short scheduler slice (wake_slice.h) through
// sched_setattr, which glibc does not wrap on this distribution.
#include "recovery/wake_slice.h"

#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

namespace bsp::recovery {
namespace {

// The kernel's struct sched_attr (include/uapi/linux/sched/types.h), version 1 (56 bytes).
struct SchedAttr {
  std::uint32_t size;
  std::uint32_t sched_policy;
  std::uint64_t sched_flags;
  std::int32_t sched_nice;
  std::uint32_t sched_priority;
  std::uint64_t sched_runtime;
  std::uint64_t sched_deadline;
  std::uint64_t sched_period;
  std::uint32_t sched_util_min;
  std::uint32_t sched_util_max;
};

constexpr std::uint64_t kResetOnFork = 0x01;  // SCHED_FLAG_RESET_ON_FORK
constexpr std::uint64_t kMinSliceNs = 100'000, kMaxSliceNs = 100'000'000;

bool current(SchedAttr& attr) {
  std::memset(&attr, 0, sizeof attr);
  return ::syscall(SYS_sched_getattr, 0, &attr, sizeof attr, 0) == 0;
}

}  // namespace

int wake_slice_us() {
  SchedAttr attr;
  if (!current(attr) || attr.sched_policy != SCHED_OTHER) return 0;
  return static_cast<int>(attr.sched_runtime / 1000);
}

int request_wake_slice(int slice_us) {
  if (slice_us <= 0) return wake_slice_us();
  SchedAttr attr;
  if (!current(attr) || attr.sched_policy != SCHED_OTHER) return 0;  // the user chose a policy: keep it
  std::uint64_t slice_ns = static_cast<std::uint64_t>(slice_us) * 1000;
  slice_ns = slice_ns < kMinSliceNs ? kMinSliceNs : slice_ns > kMaxSliceNs ? kMaxSliceNs : slice_ns;
  attr.size = sizeof attr;
  attr.sched_flags = kResetOnFork;  // sched_nice stays what getattr read
  attr.sched_runtime = slice_ns;
  attr.sched_deadline = attr.sched_period = 0;
  attr.sched_util_min = attr.sched_util_max = 0;
  ::syscall(SYS_sched_setattr, 0, &attr, 0);  // refused: the slice stays what it was
  return wake_slice_us();
}

}  // namespace bsp::recovery
