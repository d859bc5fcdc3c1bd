// transport/nic/ether_types.h: the EtherTypes of the nic transport's data frames. On an
// Ethernet interface every data frame carries 0x88B5 (IEEE "local experimental"); the
// destination's pid sits in the frame and a BPF filter per socket picks it out. On lo every
// packet socket bound to a type is offered every frame of that type, so a job of p
// processes ran p filters per frame (p² per all-to-all round: at p = 256, 26 µs of CPU per
// message against 5.6 with a type per destination, experiments/wake_cost --transport=packet).
// There frames to pid i carry 0xB500 + i mod 256 instead, each process binds to its own,
// and a frame is offered to the sockets of p / 256 processes at most (the filter still
// checks job and pid). Frames on lo never leave the host, so the types need no registry.
#pragma once

#include <cstdint>

namespace bsp::transport::nic {

inline constexpr std::uint16_t kEtherType = 0x88B5;              // data frames off loopback
inline constexpr std::uint16_t kLoopbackEtherTypeBase = 0xB500;  // data frames on lo: + pid % 256
inline constexpr int kLoopbackEtherTypes = 256;

// The EtherType of a data frame to pid on a loopback interface (lo) or on an Ethernet one.
constexpr std::uint16_t data_ether_type(bool loopback, int pid) {
  return loopback ? static_cast<std::uint16_t>(kLoopbackEtherTypeBase + pid % kLoopbackEtherTypes) : kEtherType;
}

// Whether a captured frame's EtherType is one of the nic transport's data frames.
constexpr bool is_data_ether_type(std::uint16_t type) {
  return type == kEtherType || (type >= kLoopbackEtherTypeBase && type < kLoopbackEtherTypeBase + kLoopbackEtherTypes);
}

}  // namespace bsp::transport::nic
