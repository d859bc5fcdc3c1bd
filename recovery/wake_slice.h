// recovery/wake_slice.h: the scheduler time slice a BSP process asks for, so that a
// process woken from a wait runs soon on a core it shares. Linux's EEVDF scheduler (6.6+)
// picks the runnable task with the earliest virtual deadline, a slice after it became
// eligible, and (6.12+) lets a task ask for its own slice (sched_attr.sched_runtime,
// 0.1-100 ms). A BSP process computes in short bursts between waits; with the default
// slice (1.4 ms here) each wake-up queued behind other tasks' slices: LU class W, p = 4 on
// 2 cores, shm, loaded: 0.26-0.48 ms between wake-up and running, 0.12-0.13 ms with a
// 100 us slice (perf sched timehist, docs/figures.md, "Waiting on shared cores"). The
// share of the core is unchanged (fairness is by virtual runtime, not slice). The NAS
// times did not move beyond the load's noise either way, so it is asked for only with
// --slice-us (bsplib/options.cc).
#pragma once

namespace bsp::recovery {

// Asks the kernel to run this process with a slice of slice_us microseconds (0: leave
// the kernel's default). Only a process under the normal policy (SCHED_OTHER) is changed,
// its nice value kept; its children start with the kernel's default again (the BSP
// program's own children are not BSP processes; by the kernel's reset-on-fork rule a
// negative nice value is not inherited either). Returns the slice in effect afterwards
// in microseconds as the kernel reports it: the asked one, the kernel's default where
// none was asked for, 0 where the kernel reports no slice (before 6.12: nothing was
// changed) or the policy is not SCHED_OTHER.
int request_wake_slice(int slice_us);

// This process's slice as the kernel reports it, microseconds (0 as above).
int wake_slice_us();

}  // namespace bsp::recovery
