// bsplib/launch/host_list.h: where a job's processes run. Parses bsprun's --hosts list
// ("nodeA:4,nodeB:4") and Open MPI's hostfile format ("nodeA slots=4", comments after
// '#', blank lines; our extension "iface=NAME" names the interface the job uses on that
// host), and places processes by slots in order: pids 0..3 on the first host's 4 slots,
// then the next host's.
#pragma once

#include <string>
#include <vector>

namespace bsp::launch {

struct Host {
  std::string name;  // as the user wrote it: what the remote shell is given
  int slots = 1;
  std::string iface;  // "" = the job's --iface, if any
};

struct Placement {
  Host host;
  std::vector<int> pids;  // ascending
};

// Throw std::invalid_argument with a message saying what is wrong and where.
std::vector<Host> parse_host_list(const std::string& list);
std::vector<Host> parse_hostfile_text(const std::string& text, const std::string& file_name);
std::vector<Host> read_hostfile(const std::string& path);

// The first `processes` slots, in order; a host listed twice adds its slots to the first
// mention. More processes than slots is an error naming both counts.
std::vector<Placement> place(int processes, const std::vector<Host>& hosts);

}  // namespace bsp::launch
