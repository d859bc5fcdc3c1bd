// bsplib/bsp_stats.cc: the statistics calls of bsp_stats.h, read from the engine and the
// reliable channel.
#include "bsplib/bsp_stats.h"

#include <vector>

#include "bsplib/bsp.h"
#include "bsplib/runtime.h"

namespace bsp::stats {

namespace {

// Every counter of Packets, for adding and subtracting field by field.
constexpr std::uint64_t Packets::*kFields[] = {
    &Packets::data_sent,     &Packets::data_received,    &Packets::bytes_sent, &Packets::bytes_received,
    &Packets::explicit_acks, &Packets::retransmissions,  &Packets::duplicates, &Packets::gaps,
    &Packets::nacks,         &Packets::overflow_refused, &Packets::corrupt,    &Packets::foreign};
static_assert(sizeof(kFields) / sizeof(kFields[0]) * sizeof(std::uint64_t) == sizeof(Packets));

}  // namespace

Packets& Packets::operator+=(const Packets& other) {
  for (auto field : kFields) this->*field += other.*field;
  return *this;
}

Packets& Packets::operator-=(const Packets& other) {
  for (auto field : kFields) this->*field -= other.*field;
  return *this;
}

double communication_seconds() { return Runtime::instance().engine("bsp::stats").communication_seconds(); }

Packets packets() {
  const recovery::ChannelStats& s = Runtime::instance().engine("bsp::stats").channel().stats();
  return Packets{s.data_sent,          s.data_received,    s.bytes_sent,          s.bytes_received,
                 s.explicit_acks_sent, s.retransmissions,  s.duplicates_received, s.gaps_detected,
                 s.nacks_sent,         s.overflow_dropped, s.corrupt_dropped,     s.foreign_dropped};
}

Packets packets_total() {
  const Packets mine = packets();
  const int p = bsp_nprocs();
  std::vector<Packets> all(static_cast<std::size_t>(p));
  bsp_push_reg(all.data(), static_cast<int>(all.size() * sizeof(Packets)));
  bsp_sync();
  for (int peer = 0; peer < p; ++peer) {
    bsp_put(peer, &mine, all.data(), bsp_pid() * static_cast<int>(sizeof mine), sizeof mine);
  }
  bsp_sync();
  bsp_pop_reg(all.data());
  Packets total;
  for (const Packets& one : all) total += one;
  return total;
}

std::string transport_name() { return Runtime::instance().transport_name(); }

long supersteps() { return Runtime::instance().engine("bsp::stats").supersteps(); }

}  // namespace bsp::stats
