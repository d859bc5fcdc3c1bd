// recovery/spin_policy.cc: the default spin from the host's oversubscription
// (spin_policy.h).
#include "recovery/spin_policy.h"

#include <sched.h>

#include <algorithm>

namespace bsp::recovery {

int default_spin_us(int processes_on_host, int cores) {
  cores = std::max(cores, 1);
  if (processes_on_host <= cores) return kDefaultSpinUs;
  return processes_on_host <= kFullSpinProcessesPerCore * cores ? kSharedCoreSpinUs : 0;
}

int usable_cores() {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  if (::sched_getaffinity(0, sizeof cpus, &cpus) != 0) return 1;
  return std::max(CPU_COUNT(&cpus), 1);
}

}  // namespace bsp::recovery
