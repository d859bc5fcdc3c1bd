// bsplib/core_pinning.cc: one core per process on an undersubscribed host (core_pinning.h).
#include "bsplib/core_pinning.h"

#include <fmt/format.h>
#include <sched.h>

#include <cerrno>
#include <cstring>

namespace bsp {

std::string pin_to_core(const MachineShare& share) {
  const int local = share.processes, rank = share.rank;
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (::sched_getaffinity(0, sizeof allowed, &allowed) != 0) return "not-pinned(getaffinity)";
  const int cores = CPU_COUNT(&allowed);
  if (local < 2) return "not-pinned(alone)";
  if (local > cores) return fmt::format("not-pinned({}-processes-on-{}-cores)", local, cores);
  if (rank >= cores) return "not-pinned(rank)";
  for (int cpu = 0, seen = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &allowed) || seen++ != rank) continue;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (::sched_setaffinity(0, sizeof one, &one) != 0) return fmt::format("not-pinned({})", std::strerror(errno));
    return fmt::format("pinned-cpu{}", cpu);
  }
  return "not-pinned(rank)";
}

}  // namespace bsp
