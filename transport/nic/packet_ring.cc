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

tpacket2_hdr* header_at(std::byte* base, std::size_t frame_size, std::size_t index) {
  return reinterpret_cast<tpacket2_hdr*>(base + index * frame_size);
}

std::uint32_t load_status(tpacket2_hdr* header) { return __atomic_load_n(&header->tp_status, __ATOMIC_ACQUIRE); }
void store_status(tpacket2_hdr* header, std::uint32_t status) {
  __atomic_store_n(&header->tp_status, status, __ATOMIC_RELEASE);
}

tpacket_req geometry(std::size_t frame_size, std::size_t bytes) {
  std::size_t block = std::max<std::size_t>(frame_size, 1u << 16);
  std::size_t blocks = std::max<std::size_t>(1, bytes / block);
  tpacket_req request{};
  request.tp_block_size = static_cast<unsigned>(block);
  request.tp_block_nr = static_cast<unsigned>(blocks);
  request.tp_frame_size = static_cast<unsigned>(frame_size);
  request.tp_frame_nr = static_cast<unsigned>(block / frame_size * blocks);
  return request;
}

}  // namespace

PacketRings::PacketRings(int fd, std::size_t max_frame, std::size_t rx_bytes, std::size_t tx_bytes) : fd_(fd) {
  frame_size_ = std::bit_ceil(TPACKET_ALIGN(TPACKET2_HDRLEN) + max_frame);
  int version = TPACKET_V2;
  if (::setsockopt(fd, SOL_PACKET, PACKET_VERSION, &version, sizeof version) != 0) {
    throw std::runtime_error(fmt::format("nic transport: TPACKET_V2: {}", std::strerror(errno)));
  }
  tpacket_req rx = geometry(frame_size_, rx_bytes);
  tpacket_req tx = geometry(frame_size_, tx_bytes);
  if (::setsockopt(fd, SOL_PACKET, PACKET_RX_RING, &rx, sizeof rx) != 0 ||
      ::setsockopt(fd, SOL_PACKET, PACKET_TX_RING, &tx, sizeof tx) != 0) {
    throw std::runtime_error(fmt::format("nic transport: packet rings: {}", std::strerror(errno)));
  }
  std::size_t rx_size = std::size_t{rx.tp_block_size} * rx.tp_block_nr;
  std::size_t tx_size = std::size_t{tx.tp_block_size} * tx.tp_block_nr;
  map_size_ = rx_size + tx_size;
  void* map = ::mmap(nullptr, map_size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) throw std::runtime_error(fmt::format("nic transport: mmap rings: {}", std::strerror(errno)));
  map_ = static_cast<std::byte*>(map);
  rx_base_ = map_;
  tx_base_ = map_ + rx_size;
  rx_count_ = rx.tp_frame_nr;
  tx_count_ = tx.tp_frame_nr;
  tx_tags_.assign(tx_count_, -1);
}

PacketRings::~PacketRings() {
  if (map_) ::munmap(map_, map_size_);
}

std::span<const std::byte> PacketRings::peek_received() {
  tpacket2_hdr* header = header_at(rx_base_, frame_size_, rx_next_);
  if (!(load_status(header) & TP_STATUS_USER)) return {};
  return {reinterpret_cast<const std::byte*>(header) + header->tp_mac, header->tp_snaplen};
}

void PacketRings::release_received() {
  store_status(header_at(rx_base_, frame_size_, rx_next_), TP_STATUS_KERNEL);
  rx_next_ = (rx_next_ + 1) % rx_count_;
}

std::span<std::byte> PacketRings::reserve(std::size_t size) {
  if (kTxDataOffset + size > frame_size_) return {};
  tpacket2_hdr* header = header_at(tx_base_, frame_size_, tx_next_);
  std::uint32_t status = load_status(header);
  if (queued_ >= tx_count_ || (status != TP_STATUS_AVAILABLE && !(status & TP_STATUS_WRONG_FORMAT))) return {};
  reserved_size_ = size;
  return {reinterpret_cast<std::byte*>(header) + kTxDataOffset, size};
}

void PacketRings::queue(int tag) {
  tpacket2_hdr* header = header_at(tx_base_, frame_size_, tx_next_);
  header->tp_len = static_cast<std::uint32_t>(reserved_size_);
  tx_tags_[tx_next_] = tag;
  if (queued_ == 0) tx_first_queued_ = tx_next_;
  ++queued_;
  tx_next_ = (tx_next_ + 1) % tx_count_;
}

bool PacketRings::kick(const std::function<void(int, std::span<std::byte>)>& touch) {
  for (std::size_t i = 0, slot = tx_first_queued_; i < queued_; ++i, slot = (slot + 1) % tx_count_) {
    tpacket2_hdr* header = header_at(tx_base_, frame_size_, slot);
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
