// transport/nic/packet_ring.cc: TPACKET_V2 receive and transmit rings.
#include "transport/nic/packet_ring.h"

#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace bsp::transport::nic {
namespace {

constexpr std::size_t kTxDataOffset = TPACKET_ALIGN(sizeof(tpacket2_hdr));

std::uint32_t load_status(tpacket2_hdr* header) { return __atomic_load_n(&header->tp_status, __ATOMIC_ACQUIRE); }
void store_status(tpacket2_hdr* header, std::uint32_t status) {
  __atomic_store_n(&header->tp_status, status, __ATOMIC_RELEASE);
}

tpacket_req request_for(const RingGeometry& geometry) {
  tpacket_req request{};
  request.tp_block_size = static_cast<unsigned>(geometry.block);
  request.tp_block_nr = static_cast<unsigned>(geometry.blocks);
  request.tp_frame_size = static_cast<unsigned>(geometry.slot);
  request.tp_frame_nr = static_cast<unsigned>(geometry.slots());
  return request;
}

}  // namespace

PacketRings::PacketRings(int fd, std::size_t max_frame, std::size_t rx_frames, std::size_t tx_frames) : fd_(fd) {
  int version = TPACKET_V2;
  if (::setsockopt(fd, SOL_PACKET, PACKET_VERSION, &version, sizeof version) != 0) {
    throw std::runtime_error(fmt::format("nic transport: TPACKET_V2: {}", std::strerror(errno)));
  }
  // The kernel puts a received frame's Ethernet header 16-byte aligned plus 14 after the
  // slot header (tpacket_rcv's macoff): room for that, and for the transmit data offset.
  rx_ = ring_geometry(TPACKET_ALIGN(TPACKET2_HDRLEN + 16), max_frame, rx_frames);
  tpacket_req rx = request_for(rx_);
  if (::setsockopt(fd, SOL_PACKET, PACKET_RX_RING, &rx, sizeof rx) != 0) {
    throw std::runtime_error(fmt::format("nic transport: receive ring: {}", std::strerror(errno)));
  }
  std::size_t tx_size = 0;
  if (tx_frames > 0) {
    tx_ = ring_geometry(TPACKET_ALIGN(TPACKET2_HDRLEN + 16), max_frame, tx_frames);
    tpacket_req tx = request_for(tx_);
    if (::setsockopt(fd, SOL_PACKET, PACKET_TX_RING, &tx, sizeof tx) != 0) {
      throw std::runtime_error(fmt::format("nic transport: transmit ring: {}", std::strerror(errno)));
    }
    tx_size = tx_.bytes();
  }
  map_size_ = rx_.bytes() + tx_size;
  void* map = ::mmap(nullptr, map_size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) throw std::runtime_error(fmt::format("nic transport: mmap rings: {}", std::strerror(errno)));
  map_ = static_cast<std::byte*>(map);
  rx_base_ = map_;
  tx_base_ = map_ + rx_.bytes();
  rx_count_ = rx_.slots();
  tx_count_ = tx_frames > 0 ? tx_.slots() : 0;
  tx_tags_.assign(tx_count_, -1);
}

PacketRings::~PacketRings() {
  if (map_) ::munmap(map_, map_size_);
}

std::span<const std::byte> PacketRings::peek_received() {
  tpacket2_hdr* header = rx_slot(rx_next_);
  if (!(load_status(header) & TP_STATUS_USER)) return {};
  received_whole_ = header->tp_len == header->tp_snaplen;
  return {reinterpret_cast<const std::byte*>(header) + header->tp_mac, header->tp_snaplen};
}

bool PacketRings::has_received() const { return (load_status(rx_slot(rx_next_)) & TP_STATUS_USER) != 0; }

void PacketRings::release_received() {
  store_status(rx_slot(rx_next_), TP_STATUS_KERNEL);
  rx_next_ = (rx_next_ + 1) % rx_count_;
}

std::span<std::byte> PacketRings::reserve(std::size_t size) {
  if (tx_count_ == 0 || kTxDataOffset + size > tx_.slot) return {};
  tpacket2_hdr* header = tx_slot(tx_next_);
  std::uint32_t status = load_status(header);
  if (queued_ >= tx_count_ || (status != TP_STATUS_AVAILABLE && !(status & TP_STATUS_WRONG_FORMAT))) return {};
  reserved_size_ = size;
  return {reinterpret_cast<std::byte*>(header) + kTxDataOffset, size};
}

void PacketRings::queue(int tag) {
  tpacket2_hdr* header = tx_slot(tx_next_);
  header->tp_len = static_cast<std::uint32_t>(reserved_size_);
  tx_tags_[tx_next_] = tag;
  if (queued_ == 0) tx_first_queued_ = tx_next_;
  ++queued_;
  tx_next_ = (tx_next_ + 1) % tx_count_;
}

bool PacketRings::kick(const std::function<void(int, std::span<std::byte>)>& touch) {
  for (std::size_t i = 0, slot = tx_first_queued_; i < queued_; ++i, slot = (slot + 1) % tx_count_) {
    tpacket2_hdr* header = tx_slot(slot);
    if (touch) touch(tx_tags_[slot], {reinterpret_cast<std::byte*>(header) + kTxDataOffset, header->tp_len});
    store_status(header, TP_STATUS_SEND_REQUEST);
  }
  if (queued_ > 0) kick_owed_ = true;
  queued_ = 0;
  if (!kick_owed_) return true;
  // The kernel sends every slot marked SEND_REQUEST; if it cannot now (no buffer), the
  // slots stay marked and the next kick sends them.
  if (::send(fd_, nullptr, 0, MSG_DONTWAIT) < 0) {
    last_error_ = errno;
    return false;
  }
  last_error_ = 0;
  kick_owed_ = false;
  return true;
}

}  // namespace bsp::transport::nic
