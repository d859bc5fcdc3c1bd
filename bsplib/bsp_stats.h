// bsplib/bsp_stats.h: C++ calls a BSPlib program (benchmarks, NAS) uses to report what
// the layers underneath did: time spent inside BSPlib calls (communication + waiting),
// packet counters (paper 001, Table 3), and the transport's name. Valid between
// bsp_begin and bsp_end. A public type of its own: programs see nothing of the layers.
#pragma once

#include <cstdint>
#include <string>

namespace bsp::stats {

// Packet counters of the messaging layers (all zero where a layer does not count them:
// tcp has no retransmissions of ours).
struct Packets {
  std::uint64_t data_sent = 0;         // data frames sent (first transmissions)
  std::uint64_t data_received = 0;     // data frames accepted
  std::uint64_t bytes_sent = 0;        // payload bytes of data_sent
  std::uint64_t bytes_received = 0;    // payload bytes of data_received
  std::uint64_t explicit_acks = 0;     // ack frames sent (not piggy-backed)
  std::uint64_t retransmissions = 0;   // data frames sent again (paper 001's "data dropped")
  std::uint64_t duplicates = 0;        // data frames received twice
  std::uint64_t gaps = 0;              // missing sequence numbers noticed
  std::uint64_t nacks = 0;             // retransmission requests sent
  std::uint64_t overflow_refused = 0;  // out-of-order frames refused for want of buffers
  std::uint64_t corrupt = 0;           // damaged frames dropped
  std::uint64_t foreign = 0;           // frames not from this job dropped

  Packets& operator+=(const Packets& other);
  Packets& operator-=(const Packets& other);
};

// Seconds this process spent inside BSPlib calls since bsp_begin (bsp_sync above all):
// the "communication time" of paper 001's Table 2. Computation = bsp_time() - this.
// Where the kernel keeps time by the CPU's time-stamp counter, each sync is counted in its
// ticks and turned into seconds at each call (bsplib/sync_clock.h), so two calls with no
// sync between them may differ by a rounding (parts per million).
double communication_seconds();

// This process's packet counters since bsp_begin.
Packets packets();

// The counters summed over all processes. Collective: every process must call it (it
// runs supersteps of its own); every process gets the sum.
Packets packets_total();

// The name of the transport in use ("tcp", "udp", ...).
std::string transport_name();

// Number of supersteps (bsp_sync calls) completed since bsp_begin.
long supersteps();

}  // namespace bsp::stats
