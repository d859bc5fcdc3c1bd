// nas/common/report.h: the NPB-style end-of-run report, printed by pid 0: benchmark,
// class, size, processes, iterations, time, Mop/s (total and per process), verification;
// then the split of paper 001's Table 2 (computation vs communication = time inside
// BSPlib calls, mean and max over processes) and the packet statistics of its Table 3
// (data received, explicit acks as % of data received, data dropped = frames the reliable
// layer had to retransmit, duplicates received), summed over processes for the timed region,
// with the details behind them (bytes, gaps, nacks, frames refused for want of buffers).
#pragma once

#include <string>

#include "nas/common/region_timer.h"

namespace nas {

struct BenchmarkResult {
  std::string name;  // "EP", "CG", ...
  char problem_class = 'S';
  std::string size;  // as NPB prints it: "33554432", "64x64x64", ...
  int iterations = 0;
  double operations = 0;       // the benchmark's operation count (Mop/s = this / time / 1e6)
  std::string operation_type;  // "Random numbers generated", "floating point", ...
  bool verified = false;
};

// Prints the NPB start banner from pid 0 ("NAS Parallel Benchmarks (BSPlib) - EP
// Benchmark", the size, class and process count). Not collective.
void print_banner(const std::string& name, char problem_class, const std::string& size);

// Collective: combines every process's timer (the reported time is the maximum over
// processes, as in NPB's MPI versions), pid 0 prints the report, and every process gets
// the exit status the program should end with: 0 when verified, 1 otherwise.
int report_results(const BenchmarkResult& result, const RegionTimer& timer);

}  // namespace nas
