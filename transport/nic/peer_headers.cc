// transport/nic/peer_headers.cc: parse, check and prove the peers of a raw-frame job.
#include "transport/nic/peer_headers.h"

#include <fmt/format.h>

#include <stdexcept>

#include "transport/nic/nic_address.h"
#include "transport/nic/segment_check.h"

namespace bsp::transport::nic {

std::vector<EthernetHeader> connect_peers(const char* transport, const TransportConfig& config,
                                          const Interface& interface, const std::vector<std::string>& addresses,
                                          std::chrono::milliseconds segment_check_deadline) {
  // The job may be smaller than the processes launched (bsp_begin asked for fewer),
  // never larger, and always includes this process.
  if (addresses.size() > static_cast<std::size_t>(config.nprocs) ||
      addresses.size() <= static_cast<std::size_t>(config.pid)) {
    throw std::runtime_error(fmt::format("{}: {} addresses for a job of {} processes launched (pid {})", transport,
                                         addresses.size(), config.nprocs, config.pid));
  }
  std::vector<NicAddress> parsed;
  for (std::size_t pid = 0; pid < addresses.size(); ++pid) {
    parsed.push_back(parse_address(addresses[pid], static_cast<int>(pid)));
  }
  if (std::string error = static_reachability_error(parsed, config.pid); !error.empty()) {
    throw std::runtime_error(error);
  }
  check_segment({config.pid, config.job_id, config.secret, interface, parsed, segment_check_deadline});
  std::vector<MacAddress> macs;
  for (const NicAddress& address : parsed) macs.push_back(address.mac);
  return ethernet_headers(interface, macs);
}

}  // namespace bsp::transport::nic
