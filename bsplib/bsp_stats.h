// bsplib/bsp_stats.h: C++ calls a BSPlib program (benchmarks, NAS) uses to report what
// the layers underneath did: time spent inside BSPlib calls (communication + waiting),
// the reliable layer's packet counters (paper 001, Table 3), and the transport's name.
// Valid between bsp_begin and bsp_end.
#pragma once

#include <string>

#include "recovery/stats.h"

namespace bsp::stats {

// Seconds this process spent inside BSPlib calls since bsp_begin (bsp_sync above all):
// the "communication time" of paper 001's Table 2. Computation = bsp_time() - this.
double communication_seconds();

// This process's reliable-layer counters since bsp_begin.
recovery::ChannelStats channel();

// The counters summed over all processes. Collective: every process must call it (it
// runs supersteps of its own); every process gets the sum.
recovery::ChannelStats channel_total();

// The name of the transport in use ("tcp", "udp", ...).
std::string transport_name();

// Number of supersteps (bsp_sync calls) completed since bsp_begin.
long supersteps();

}  // namespace bsp::stats
