// bsplib/core_pinning.h: one core per process (--pin=1) while a host runs no more of the
// job's processes than this process may use cores. Left to itself the scheduler often runs
// both processes of a p = 2 job on one core of a loaded machine, and every superstep then
// waits for a context switch (a median empty superstep of 3.6 us against 0.45 us pinned,
// same run); MulticoreBSP pins its threads for the same reason. But pinned processes
// cannot flee a crowded core, and large copies between two cores are slower here than
// within one (NAS and 8 MiB transfers ran slower pinned under load: docs/DESIGN.md), so it
// is not the default. More processes than cores: always left to the scheduler.
#pragma once

#include <string>

#include "bsplib/machine_share.h"

namespace bsp {

// Pins this process to the k-th core of its allowed set, k its rank among the job's
// processes on this machine (machine_share.h), when 2 <= those processes <= the allowed
// cores. Returns what it did for --stats: "pinned-cpuN", "not-pinned(WHY)".
std::string pin_to_core(const MachineShare& share);

}  // namespace bsp
