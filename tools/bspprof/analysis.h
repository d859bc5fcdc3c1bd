// tools/bspprof/analysis.h: what bspprof computes from a profile (bsprun --profile): per
// process and superstep the computation and sync times and the h-relation (from every
// process's API counts: a put or send is bytes out of its sender and into its
// destination, a get is bytes out of the process read and into the reader; a process's
// traffic to itself is not part of h), per superstep the BSP cost w + h·g + l against
// the measured time, call sites resolved to file:line, and the trace-event JSON.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "bsplib/profile/trace_format.h"

namespace bsp::profile {

// The machine in the BSP model, as Oxford's bspprof takes it (--slg=S,L,G): S in Mflop/s,
// L in flops, G in flops per 8-byte word (bench/bsp_params measures all three).
struct Model {
  double s_mflops = 0, l_flops = 0, g_flops_per_word = 0;
  bool known() const { return s_mflops > 0; }
  double l_seconds() const { return l_flops / (s_mflops * 1e6); }
  double g_seconds_per_word() const { return g_flops_per_word / (s_mflops * 1e6); }
};
inline constexpr double kWordBytes = 8;

// w + h·g + l in seconds, h in bytes (counted in 8-byte words).
double predicted_seconds(double w_seconds, double h_bytes, const Model& model);

// "S,L,G" (--slg); throws std::runtime_error naming what is wrong.
Model parse_slg(const std::string& text);
// The row of a bsp_params CSV (bench/README.md: columns transport, p, r_mflops,
// g_flops_per_word, l_flops) for this transport and p, else this transport's nearest p;
// returns an unknown model when there is none.
Model model_from_params_csv(const std::string& path, const std::string& transport, int p, std::string* chosen);

struct ProcessStep {
  double begin_s = 0, sync_start_s = 0, end_s = 0;  // seconds since the job's first begin
  double comp_s = 0, sync_s = 0;
  std::uint64_t bytes_out = 0, bytes_in = 0, messages_out = 0, messages_in = 0;
  std::uint32_t puts = 0, gets = 0, sends = 0;
  WireCounters wire;
  std::uint64_t call_site = 0;  // as recorded (an address in that process)
  bool final = false;
};

struct SuperstepSummary {
  double begin_s = 0, end_s = 0;              // earliest begin, latest end over the processes
  double w_s = 0;                             // max computation time
  double measured_s = 0;                      // max over processes of (end - begin)
  double predicted_s = 0;                     // w + h·g + l (0 without a model)
  std::uint64_t h_bytes = 0, h_messages = 0;  // max over processes of max(in, out)
};

// A call site: the module and the address in its ELF file (link-time address), resolved.
struct Site {
  std::string module;
  std::uint64_t vaddr = 0;
  std::string function = "??", location = "??:0";
  bool operator<(const Site& o) const { return module != o.module ? module < o.module : vaddr < o.vaddr; }
};

struct SiteCost {
  Site site;
  long calls = 0;  // process-supersteps ended here
  double comp_s = 0, sync_s = 0, predicted_s = 0;
  std::uint64_t h_bytes = 0;
};

struct Profile {
  int nprocs = 0;
  std::string transport, executable;
  std::vector<std::vector<ProcessStep>> steps;  // [pid][superstep]
  std::vector<SuperstepSummary> supersteps;
  Model model;
};

// Throws TraceError if the sections do not make one job (a pid missing, step counts differ).
Profile analyze(const std::vector<ProcessTrace>& traces, const Model& model);

// The module and ELF address of a return address, through the process's load map and
// the module's program headers (PIE, shared libraries and fixed executables alike);
// the address looked up is the call instruction's (return address - 1).
Site locate(const ProcessTrace& trace, std::uint64_t return_address);
// Fills function and location of every site (addr2line, one run per module).
void resolve(std::vector<Site*>& sites);
// Every (pid, recorded call site) of the profile, located and resolved.
using SiteMap = std::map<std::pair<int, std::uint64_t>, Site>;
SiteMap locate_all(const Profile& profile, const std::vector<ProcessTrace>& traces);
// Costs per call site, costliest (comp + sync) first.
std::vector<SiteCost> site_costs(const Profile& profile, const SiteMap& sites);

// Chrome/Perfetto trace-event JSON: one complete event ("ph":"X") per process per superstep.
// site_names: "function file:line" per (pid, recorded call site address), may be empty.
std::string trace_event_json(const Profile& profile,
                             const std::map<std::pair<int, std::uint64_t>, std::string>& site_names);

}  // namespace bsp::profile
