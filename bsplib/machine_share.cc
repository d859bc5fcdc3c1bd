// bsplib/machine_share.cc: the job's processes on this machine (machine_share.h).
#include "bsplib/machine_share.h"

#include <cstddef>
#include <fstream>

#include "transport/hybrid_transport.h"

namespace bsp {

std::string machine_identity() {
  std::ifstream file("/proc/sys/kernel/random/boot_id");
  std::string boot_id;
  std::getline(file, boot_id);
  return boot_id;
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

MachineShare machine_share(const std::vector<std::string>& machines, const std::vector<std::string>& addresses,
                           int self) {
  MachineShare share;
  if (self < 0) return share;
  share.members = {self};
  const auto me = static_cast<std::size_t>(self);
  const bool by_machine = me < machines.size() && !machines[me].empty();
  const std::vector<std::string>& told = by_machine ? machines : addresses;
  if (me >= told.size()) return share;
  // Where pid is: its machine, or the host of its address ("" for none: never a match).
  auto where = [&](std::size_t pid) { return by_machine ? told[pid] : host_of_address(told[pid]); };
  const std::string mine = where(me);
  if (mine.empty()) return share;
  share.members.clear();
  for (std::size_t pid = 0; pid < told.size(); ++pid) {
    if (pid != me && (told[pid].empty() || where(pid) != mine)) continue;
    share.members.push_back(static_cast<int>(pid));
    if (pid == me) continue;
    ++share.processes;
    if (pid < me) ++share.rank;
  }
  return share;
}

}  // namespace bsp
