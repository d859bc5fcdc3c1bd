// recovery/spin_policy.h: how long a waiting process spins (polls, yielding the core)
// before it blocks, from how many of the job's processes share this machine's cores
// (counted by bsplib/machine_share.h).
// Spinning pays while the peer waited for runs on another core or shares one with few
// others (a blocked process costs 60-80 us to wake); with many more processes than cores,
// spinners only yield to other spinners and delay the processes with work (measured:
// ~15% of the time at p = 64 on 2 cores). The rule is in docs/tuning.md.
#pragma once

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

// Cores this process may run on (sched_getaffinity; 1 if that fails).
int usable_cores();

}  // namespace bsp::recovery
