// transport/nic/packet_ring.h: the PACKET_MMAP rings of a packet socket (TPACKET_V2):
// a receive ring the kernel fills while the program computes (frames are read in place,
// no copy, no system call), and a transmit ring filled in place and handed to the kernel
// with one send() for the whole batch ("kick"). Slot ownership is the tp_status word,
// read with acquire and written with release ordering.
#pragma once

#include <linux/if_packet.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "transport/nic/ring_geometry.h"

namespace bsp::transport::nic {

class PacketRings {
 public:
  // Sets up the rings on fd for frames of up to max_frame bytes (Ethernet header
  // included): at least rx_frames and tx_frames slots (tx_frames 0: no transmit ring,
  // reserve() always fails). Throws std::runtime_error.
  PacketRings(int fd, std::size_t max_frame, std::size_t rx_frames, std::size_t tx_frames);
  ~PacketRings();
  PacketRings(const PacketRings&) = delete;
  PacketRings& operator=(const PacketRings&) = delete;

  // ---- receive ----
  // The next frame the kernel has handed over (empty when none). Valid until release().
  std::span<const std::byte> peek_received();
  // Whether the kernel has handed a frame over: one load of the next slot's status, no
  // system call (the waiting loop asks this between yields).
  bool has_received() const;
  // Whether the frame peek_received() returned arrived whole (not cut short by the slot).
  bool received_whole() const { return received_whole_; }
  void release_received();

  // ---- transmit ----
  // A free slot for a frame of size bytes (empty when the ring is full: kick, retry).
  std::span<std::byte> reserve(std::size_t size);
  // Queues the reserved slot (with a tag the hook gets back, e.g. the peer) for the next kick.
  void queue(int tag);
  // Calls touch(tag, frame) on every queued frame, then hands them all to the kernel with
  // one system call. Returns false if the kernel refused (e.g. ENOBUFS): retry later.
  bool kick(const std::function<void(int, std::span<std::byte>)>& touch);
  bool has_queued() const { return queued_ != 0 || kick_owed_; }
  // errno of the last kick that failed, 0 after one that succeeded.
  int last_error() const { return last_error_; }

  std::size_t rx_frames() const { return rx_count_; }

 private:
  int fd_;
  std::byte* map_ = nullptr;
  std::size_t map_size_ = 0;
  RingGeometry rx_, tx_;
  tpacket2_hdr* rx_slot(std::size_t i) const { return reinterpret_cast<tpacket2_hdr*>(rx_base_ + rx_.offset(i)); }
  tpacket2_hdr* tx_slot(std::size_t i) const { return reinterpret_cast<tpacket2_hdr*>(tx_base_ + tx_.offset(i)); }
  std::size_t rx_count_ = 0, tx_count_ = 0;
  std::byte* rx_base_ = nullptr;
  std::byte* tx_base_ = nullptr;
  std::size_t rx_next_ = 0;
  std::size_t tx_next_ = 0;  // next slot to reserve
  std::size_t tx_first_queued_ = 0;
  std::size_t queued_ = 0;
  std::size_t reserved_size_ = 0;
  bool kick_owed_ = false;
  bool received_whole_ = true;
  int last_error_ = 0;  // slots marked for sending that the kernel has not taken yet
  std::vector<int> tx_tags_;
};

}  // namespace bsp::transport::nic
