// bsplib/launch/host_list.cc: host lists, hostfiles and placement by slots.
#include "bsplib/launch/host_list.h"

#include <fmt/format.h>

#include <cctype>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace bsp::launch {
namespace {

int parse_slots(const std::string& text, const std::string& where) {
  char* end = nullptr;
  long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end || value < 1 || value > 65535) {
    throw std::invalid_argument(fmt::format("{}: slots must be a number from 1 to 65535, not '{}'", where, text));
  }
  return static_cast<int>(value);
}

void check_name(const std::string& name, const std::string& where) {
  if (name.empty()) throw std::invalid_argument(fmt::format("{}: a host needs a name", where));
  if (name[0] == '-') {  // the remote shell would take it for an option
    throw std::invalid_argument(fmt::format("{}: '{}' is not a host name or address", where, name));
  }
  for (char c : name) {
    // Names and addresses only: the name is an argument to the remote shell.
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_' && c != ':' && c != '@') {
      throw std::invalid_argument(fmt::format("{}: '{}' is not a host name or address", where, name));
    }
  }
}

// Adds a host, or its slots to an earlier mention of the same name.
void add(std::vector<Host>& hosts, Host host) {
  for (Host& known : hosts) {
    if (known.name == host.name) {
      known.slots += host.slots;
      if (known.iface.empty()) known.iface = host.iface;
      return;
    }
  }
  hosts.push_back(std::move(host));
}

}  // namespace

std::vector<Host> parse_host_list(const std::string& list) {
  std::vector<Host> hosts;
  std::stringstream items(list);
  std::string item;
  while (std::getline(items, item, ',')) {
    if (item.empty()) continue;
    Host host;
    // name:slots; a bare IPv6 address is not supported here (use a hostfile name).
    auto colon = item.rfind(':');
    host.name = item.substr(0, colon);
    if (colon != std::string::npos) host.slots = parse_slots(item.substr(colon + 1), "--hosts " + item);
    check_name(host.name, "--hosts");
    add(hosts, std::move(host));
  }
  if (hosts.empty()) throw std::invalid_argument("--hosts names no host");
  return hosts;
}

std::vector<Host> parse_hostfile_text(const std::string& text, const std::string& file_name) {
  std::vector<Host> hosts;
  std::stringstream lines(text);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::stringstream words(line);
    std::string word;
    if (!(words >> word)) continue;
    const std::string where = fmt::format("{}:{}", file_name, number);
    Host host;
    host.name = word;
    check_name(host.name, where);
    while (words >> word) {
      auto eq = word.find('=');
      std::string key = word.substr(0, eq);
      std::string value = eq == std::string::npos ? "" : word.substr(eq + 1);
      if (key == "slots" || key == "cpu" || key == "count") {
        host.slots = parse_slots(value, where);
      } else if (key == "max_slots" || key == "max-slots") {
        parse_slots(value, where);  // accepted: we never oversubscribe beyond slots anyway
      } else if (key == "iface") {
        check_name(value, where);
        host.iface = value;
      } else {
        throw std::invalid_argument(
            fmt::format("{}: unknown keyword '{}' (a hostfile line is: name [slots=N] [iface=NAME])", where, key));
      }
    }
    add(hosts, std::move(host));
  }
  if (hosts.empty()) throw std::invalid_argument(fmt::format("{} names no host", file_name));
  return hosts;
}

std::vector<Host> read_hostfile(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw std::invalid_argument(fmt::format("cannot read hostfile {}", path));
  std::stringstream text;
  text << file.rdbuf();
  return parse_hostfile_text(text.str(), path);
}

std::vector<Placement> place(int processes, const std::vector<Host>& hosts) {
  int slots = 0;
  for (const Host& host : hosts) slots += host.slots;
  if (processes > slots) {
    throw std::invalid_argument(
        fmt::format("{} processes asked for, but the hosts have {} slot{} in all; "
                    "give more slots (nodeA:4 or slots=4) or fewer processes",
                    processes, slots, slots == 1 ? "" : "s"));
  }
  std::vector<Placement> placements;
  int pid = 0;
  for (const Host& host : hosts) {
    if (pid == processes) break;
    Placement placement{host, {}};
    for (int slot = 0; slot < host.slots && pid < processes; ++slot) placement.pids.push_back(pid++);
    placements.push_back(std::move(placement));
  }
  return placements;
}

}  // namespace bsp::launch
