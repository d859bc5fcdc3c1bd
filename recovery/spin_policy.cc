// recovery/spin_policy.cc: the default spin from the host's oversubscription
// (spin_policy.h).
#include "recovery/spin_policy.h"

#include <sched.h>

#include <algorithm>
#include <utility>

namespace bsp::recovery {

int default_spin_us(int processes_on_host, int cores) {
  cores = std::max(cores, 1);
  if (processes_on_host <= cores) return kDefaultSpinUs;
  return processes_on_host <= kFullSpinProcessesPerCore * cores ? kSharedCoreSpinUs : 0;
}

bool spins_on_idle_machine(int processes_on_host, int cores) {
  return default_spin_us(processes_on_host, cores) > 0 && processes_on_host <= kIdleMachineMaxProcesses;
}

SpinExtension idle_machine_spin(std::shared_ptr<const RunnableCensus> census) {
  if (census == nullptr || !census->complete()) return {};
  return {kIdleMachineSpinUs, std::move(census)};
}

bool spin_may_go_on(const SpinExtension& extension) {
  return extension.until_us > 0 && extension.census != nullptr && extension.census->only_the_job_runs();
}

int usable_cores() {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  if (::sched_getaffinity(0, sizeof cpus, &cpus) != 0) return 1;
  return std::max(CPU_COUNT(&cpus), 1);
}

}  // namespace bsp::recovery
