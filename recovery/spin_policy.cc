// recovery/spin_policy.cc: the default spin from the host's oversubscription
// (spin_policy.h).
#include "recovery/spin_policy.h"

#include <sched.h>

#include <algorithm>
#include <fstream>

#include "transport/hybrid_transport.h"

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

std::string machine_identity() {
  std::ifstream file("/proc/sys/kernel/random/boot_id");
  std::string boot_id;
  std::getline(file, boot_id);
  return boot_id;
}

int processes_on_machine(const std::vector<std::string>& machines, const std::vector<std::string>& addresses,
                         int self) {
  if (self < 0 || self >= static_cast<int>(machines.size()) || machines[static_cast<std::size_t>(self)].empty()) {
    return processes_on_host(addresses, self);
  }
  const std::string& mine = machines[static_cast<std::size_t>(self)];
  return static_cast<int>(std::count(machines.begin(), machines.end(), mine));
}

std::string host_of_address(const std::string& address) {
  // hybrid:LOCAL|NETWORK: the local (shm) half names the host.
  auto hybrid = transport::split_hybrid_address(address);
  const std::string text = hybrid ? hybrid->first : address;
  if (text.rfind("shm:", 0) == 0) {  // shm:HOST:pid:...
    std::size_t end = text.find(':', 4);
    return "shm:" + text.substr(4, end == std::string::npos ? std::string::npos : end - 4);
  }
  if (std::size_t slash = text.find('/'); slash != std::string::npos) {
    // nic: interface/mac[/host]: processes on one host share the interface's mac (the
    // host name may be the same in every network namespace).
    std::size_t end = text.find('/', slash + 1);
    return "mac:" + text.substr(slash + 1, end == std::string::npos ? std::string::npos : end - slash - 1);
  }
  std::size_t colon = text.rfind(':');  // tcp, udp: a.b.c.d:port
  if (colon == std::string::npos) return {};
  std::string ip = text.substr(0, colon);
  if (ip.rfind("127.", 0) == 0) return "ip:loopback";
  return "ip:" + ip;
}

int processes_on_host(const std::vector<std::string>& addresses, int self) {
  if (self < 0 || self >= static_cast<int>(addresses.size())) return 1;
  const std::string mine = host_of_address(addresses[static_cast<std::size_t>(self)]);
  int count = 0;
  for (std::size_t pid = 0; pid < addresses.size(); ++pid) {
    if (static_cast<int>(pid) == self) {
      ++count;
    } else if (!addresses[pid].empty() && !mine.empty() && host_of_address(addresses[pid]) == mine) {
      ++count;
    }
  }
  return count;
}

}  // namespace bsp::recovery
