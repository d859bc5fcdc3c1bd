// bsplib/machine_params.cc: the Oxford toolset's bsp_s(), bsp_l() and bsp_g(), the BSP
// parameters of the machine the program runs on (bsp_probe and textbook programs print
// them or plan with them). Oxford read them from a table of measured machines; here they
// come, in this order, from
//   BSP_SLG=S,L,G      S in Mflop/s, L in flops, G in flops per 8-byte word (as bspprof --slg)
//   BSP_PARAMS=CSV     bench/bsp_params output (default results/bench/params.csv): the row of
//                      the job's transport (a hybrid's shm part on one host) nearest its p
//   a default          S = 1000 Mflop/s, L = 20000 flops, G = 10 flops per word, with a note
//                      on stderr the first time (from pid 0 only)
// Units as Oxford's: bsp_s() in flop/s, bsp_l() in flops, bsp_g() in flops per word.
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "bsplib/bsp.h"
#include "bsplib/options.h"
#include "bsplib/runtime.h"

namespace {

struct Params {
  double s_mflops = 0, l_flops = 0, g_flops_per_word = 0;
  bool known() const { return s_mflops > 0 && l_flops >= 0 && g_flops_per_word >= 0; }
};

constexpr Params kDefault{1000, 20000, 10};

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, separator)) parts.push_back(part);
  return parts;
}

// "S,L,G"; unknown (all 0) when malformed.
Params parse_slg(const std::string& text) {
  std::vector<std::string> parts = split(text, ',');
  if (parts.size() != 3) return {};
  Params params;
  double* fields[] = {&params.s_mflops, &params.l_flops, &params.g_flops_per_word};
  for (int i = 0; i < 3; ++i) {
    char* end = nullptr;
    *fields[i] = std::strtod(parts[static_cast<std::size_t>(i)].c_str(), &end);
    if (end == parts[static_cast<std::size_t>(i)].c_str() || *end != '\0') return {};
  }
  return params;
}

// The row of bench/bsp_params' CSV for transport nearest p (a later row wins a tie).
Params from_csv(const std::string& path, const std::string& transport, int p) {
  std::ifstream in(path);
  std::string line;
  std::vector<std::string> header;
  Params best;
  int best_distance = -1;
  while (std::getline(in, line)) {
    std::vector<std::string> fields = split(line, ',');
    bool is_header = false;
    for (const std::string& field : fields) is_header |= field == "g_flops_per_word";
    if (is_header) {
      header = fields;
      continue;
    }
    if (header.empty() || fields.size() != header.size()) continue;
    auto column = [&](const char* name) -> std::string {
      for (std::size_t i = 0; i < header.size(); ++i) {
        if (header[i] == name) return fields[i];
      }
      return {};
    };
    if (column("transport") != transport) continue;
    Params row{std::atof(column("r_mflops").c_str()), std::atof(column("l_flops").c_str()),
               std::atof(column("g_flops_per_word").c_str())};
    if (!row.known()) continue;
    int distance = std::abs(std::atoi(column("p").c_str()) - p);
    if (best_distance < 0 || distance <= best_distance) {
      best = row;
      best_distance = distance;
    }
  }
  return best;
}

std::string job_transport() {
  try {
    return bsp::options_from_environment().transport;
  } catch (const std::exception&) {
    return bsp::RunOptions{}.transport;
  }
}

const Params& machine() {
  static Params params;
  static std::once_flag once;
  std::call_once(once, [] {
    if (const char* slg = std::getenv("BSP_SLG"); slg && *slg) {
      params = parse_slg(slg);
      if (params.known()) return;
      std::fprintf(stderr, "bsplib: BSP_SLG=%s is not S,L,G (Mflop/s, flops, flops per word); ignored\n", slg);
    }
    const char* csv = std::getenv("BSP_PARAMS");
    std::string path = csv && *csv ? csv : "results/bench/params.csv";
    std::string transport = job_transport();
    int p = bsp_nprocs();
    params = from_csv(path, transport, p);
    if (!params.known() && transport.find('+') != std::string::npos) {
      params = from_csv(path, transport.substr(0, transport.find('+')), p);  // shm+tcp on one host is shm
    }
    if (params.known()) return;
    params = kDefault;
    bsp::Runtime& runtime = bsp::Runtime::instance();
    if (!runtime.running() || bsp_pid() == 0) {
      std::fputs(fmt::format("bsplib: bsp_s/bsp_l/bsp_g: no measured parameters for transport {} ({} has no row; "
                             "bench/bsp_params makes it, BSP_PARAMS=CSV names it, BSP_SLG=S,L,G sets them): "
                             "using S = {} Mflop/s, L = {} flops, G = {} flops per word\n",
                             transport, path, kDefault.s_mflops, kDefault.l_flops, kDefault.g_flops_per_word)
                     .c_str(),
                 stderr);
    }
  });
  return params;
}

}  // namespace

extern "C" {

double bsp_s(void) { return machine().s_mflops * 1e6; }
double bsp_l(void) { return machine().l_flops; }
double bsp_g(void) { return machine().g_flops_per_word; }

}  // extern "C"
