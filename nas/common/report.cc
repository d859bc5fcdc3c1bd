// nas/common/report.cc: gathering of timings and packet counters, and the printed report.
#include "nas/common/report.h"

#include <cstdint>
#include <cstdio>
#include <vector>

#include "bsplib/bsp.h"
#include "bsplib/bsp_stats.h"
#include "nas/common/collectives.h"

namespace nas {

namespace {

constexpr int kCounters = sizeof(bsp::stats::Packets) / sizeof(std::uint64_t);
static_assert(sizeof(bsp::stats::Packets) == kCounters * sizeof(std::uint64_t));

void print_line(const char* label, const std::string& value) { std::printf(" %-16s= %24s\n", label, value.c_str()); }

}  // namespace

void print_banner(const std::string& name, char problem_class, const std::string& size) {
  if (bsp_pid() != 0) return;
  std::printf("\n\n NAS Parallel Benchmarks (BSPlib) - %s Benchmark\n\n", name.c_str());
  std::printf(" Size: %s  (class %c)\n", size.c_str(), problem_class);
  std::printf(" Number of processes: %d\n\n", bsp_nprocs());
  std::fflush(stdout);
}

int report_results(const BenchmarkResult& result, const RegionTimer& timer) {
  const int p = bsp_nprocs();
  double times[3] = {timer.seconds(), timer.communication_seconds(), timer.computation_seconds()};
  std::vector<double> all_times(3 * p);
  all_gather(times, sizeof times, all_times.data());
  bsp::stats::Packets channel = timer.channel();
  all_reduce_sum(reinterpret_cast<std::int64_t*>(&channel), kCounters);
  std::string transport = bsp::stats::transport_name();
  long supersteps = bsp::stats::supersteps();
  if (bsp_pid() != 0) return result.verified ? 0 : 1;

  double seconds = 0, comm_sum = 0, comm_max = 0, comp_sum = 0, comp_max = 0;
  for (int q = 0; q < p; ++q) {
    seconds = std::max(seconds, all_times[3 * q]);
    comm_sum += all_times[3 * q + 1];
    comm_max = std::max(comm_max, all_times[3 * q + 1]);
    comp_sum += all_times[3 * q + 2];
    comp_max = std::max(comp_max, all_times[3 * q + 2]);
  }
  double mops = seconds > 0 ? result.operations / seconds / 1e6 : 0.0;
  char buffer[64];
  std::printf("\n\n %s Benchmark Completed.\n", result.name.c_str());
  print_line("Class", std::string(1, result.problem_class));
  print_line("Size", result.size);
  print_line("Iterations", std::to_string(result.iterations));
  std::snprintf(buffer, sizeof buffer, "%.2f", seconds);
  print_line("Time in seconds", buffer);
  print_line("Total processes", std::to_string(p));
  std::snprintf(buffer, sizeof buffer, "%.2f", mops);
  print_line("Mop/s total", buffer);
  std::snprintf(buffer, sizeof buffer, "%.2f", mops / p);
  print_line("Mop/s/process", buffer);
  print_line("Operation type", result.operation_type);
  print_line("Verification", result.verified ? "SUCCESSFUL" : "UNSUCCESSFUL");
  print_line("Transport", transport);
  std::printf(" Computation time (s)   = %10.3f mean, %10.3f max over processes\n", comp_sum / p, comp_max);
  std::printf(" Communication time (s) = %10.3f mean, %10.3f max (inside BSPlib calls)\n", comm_sum / p, comm_max);
  std::printf(" Supersteps             = %10ld (since bsp_begin, process 0)\n", supersteps);
  double ack_percent = channel.data_received ? 100.0 * channel.explicit_acks / channel.data_received : 0.0;
  std::printf(
      " Packets (timed region, all processes): data received = %llu, explicit acks = %.2f%%, "
      "data dropped = %llu, duplicates received = %llu\n",
      static_cast<unsigned long long>(channel.data_received), ack_percent,
      static_cast<unsigned long long>(channel.retransmissions), static_cast<unsigned long long>(channel.duplicates));
  std::printf(
      " Packet details: bytes received = %llu, gaps detected = %llu, nacks sent = %llu, "
      "refused for want of buffers = %llu, corrupt = %llu\n\n",
      static_cast<unsigned long long>(channel.bytes_received), static_cast<unsigned long long>(channel.gaps),
      static_cast<unsigned long long>(channel.nacks), static_cast<unsigned long long>(channel.overflow_refused),
      static_cast<unsigned long long>(channel.corrupt));
  std::fflush(stdout);
  return result.verified ? 0 : 1;
}

}  // namespace nas
