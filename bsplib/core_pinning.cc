// bsplib/core_pinning.cc: one core per process on an undersubscribed host (core_pinning.h).
#include "bsplib/core_pinning.h"

#include <fmt/format.h>
#include <sched.h>

#include <cerrno>
#include <cstring>

#include "recovery/spin_policy.h"

namespace bsp {

std::string pin_to_core(const std::vector<std::string>& machines, const std::vector<std::string>& addresses, int self) {
  if (self < 0) return "not-pinned(no-pid)";
  const int local = recovery::processes_on_machine(machines, addresses, self);
  // This process's rank among them, told apart the same way processes_on_machine counts.
  const bool by_machine = self < static_cast<int>(machines.size()) && !machines[static_cast<std::size_t>(self)].empty();
  const std::string mine = by_machine ? machines[static_cast<std::size_t>(self)]
                           : self < static_cast<int>(addresses.size())
                               ? recovery::host_of_address(addresses[static_cast<std::size_t>(self)])
                               : std::string();
  int rank = 0;
  for (int pid = 0; pid < self; ++pid) {
    const auto q = static_cast<std::size_t>(pid);
    if (by_machine ? q < machines.size() && machines[q] == mine
                   : q < addresses.size() && !addresses[q].empty() && !mine.empty() &&
                         recovery::host_of_address(addresses[q]) == mine) {
      ++rank;
    }
  }
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
