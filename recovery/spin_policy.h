// recovery/spin_policy.h: how long a waiting process spins (polls, yielding the core)
// before it blocks, from how many of the job's processes share this machine's cores
// (counted by bsplib/machine_share.h).
// Spinning pays while the peer waited for runs on another core or shares one with few
// others (a blocked process costs 60-80 us to wake); with many more processes than cores,
// spinners only yield to other spinners and delay the processes with work (measured:
// ~15% of the time at p = 64 on 2 cores). The rule is in docs/tuning.md.
#pragma once

#include <memory>

#include "recovery/runnable_census.h"

namespace bsp::recovery {

// The spin before blocking when the user gave none: kDefaultSpinUs while every process
// has a core; kSharedCoreSpinUs while up to kFullSpinProcessesPerCore share each core (a
// yielding spin hands the core straight to the peer it waits for, where blocking would
// pay a wake-up and the scheduler's delay each time: NAS class W at p = 4 on 2 cores, SP
// 1.27 -> 0.82 s, BT 0.64 -> 0.49, LU 1.10 -> 0.87, no loss elsewhere; LU at p = 8 1.61 ->
// 0.96; on a host whose wake-ups cost more, 1000 us against 500: SP 2.87 -> 2.24, BT 1.13
// -> 0.95); none beyond (see tuning.md).
inline constexpr int kDefaultSpinUs = 100;
inline constexpr int kSharedCoreSpinUs = 1000;
inline constexpr int kFullSpinProcessesPerCore = 4;
int default_spin_us(int processes_on_host, int cores);

// A spin that goes on past its first part, a check at a time, while nothing but the
// job's processes is runnable on the machine: then a yield hands the core only to the
// job, and a peer's share of a long superstep (several ms at NAS class A) no longer
// outlasts the spin and leaves both processes of a core asleep while the other core's
// pair works (SP and LU class A at p = 4 on 2 cores used 83-89% of the cores; spinning
// on, 99%), nor leaves a process with a core of its own asleep, to be woken. Another
// task runnable anywhere ends it: the spin would take turns from it and from the peer
// (twice the time at class W with a CPU hog per core when it went on regardless).
struct SpinExtension {
  int until_us = 0;                              // the longest the spin goes on to (0: never)
  std::shared_ptr<const RunnableCensus> census;  // who runs now
};
inline constexpr int kIdleMachineSpinUs = 5000;
inline constexpr int kIdleMachineCheckUs = 1000;  // the spin goes on this much per check
// Each check reads one /proc file per process of the job on the machine: taken only up
// to this many (16 reads, ~50 us a check).
inline constexpr int kIdleMachineMaxProcesses = 16;
// Whether a process with processes_on_host of the job on cores spins on: wherever
// default_spin_us spins at all, up to kIdleMachineMaxProcesses. With a core each the spin
// is short (kDefaultSpinUs), and a longer wait that blocked would leave the core idle and
// pay a wake-up (NAS CG class A at p = 2 on 2 cores: the cores 85% busy; spinning on, 95%).
bool spins_on_idle_machine(int processes_on_host, int cores);
// The extension over census (none if it is null or incomplete).
SpinExtension idle_machine_spin(std::shared_ptr<const RunnableCensus> census);
// Whether a spin may go on now: the census says only the job runs.
bool spin_may_go_on(const SpinExtension& extension);

// Cores this process may run on (sched_getaffinity; 1 if that fails).
int usable_cores();

}  // namespace bsp::recovery
