// transport/nic/block_ring.cc: TPACKET_V3 receive ring set-up and block walk.
#include "transport/nic/block_ring.h"

#include <fmt/format.h>
#include <linux/if_packet.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace bsp::transport::nic {
namespace {

tpacket_block_desc* descriptor(std::byte* block) { return reinterpret_cast<tpacket_block_desc*>(block); }

std::uint32_t load_status(std::byte* block) {
  return __atomic_load_n(&descriptor(block)->hdr.bh1.block_status, __ATOMIC_ACQUIRE);
}

}  // namespace

BlockRing::BlockRing(int fd, std::size_t max_frame, std::size_t frames, unsigned retire_ms) {
  int version = TPACKET_V3;
  if (::setsockopt(fd, SOL_PACKET, PACKET_VERSION, &version, sizeof version) != 0) {
    throw std::runtime_error(fmt::format("nic transport: TPACKET_V3: {}", std::strerror(errno)));
  }
  // A block's first frame starts after its descriptor: room for it in the slot count.
  geometry_ = ring_geometry(TPACKET_ALIGN(TPACKET3_HDRLEN + 16), max_frame, frames);
  if (geometry_.slots_per_block > 1) {
    geometry_.slots_per_block = (geometry_.block - TPACKET_ALIGN(sizeof(tpacket_block_desc))) / geometry_.slot;
  }
  tpacket_req3 request{};
  request.tp_block_size = static_cast<unsigned>(geometry_.block);
  request.tp_block_nr = static_cast<unsigned>(geometry_.blocks);
  request.tp_frame_size = static_cast<unsigned>(geometry_.slot);
  request.tp_frame_nr = static_cast<unsigned>(geometry_.block / geometry_.slot * geometry_.blocks);
  request.tp_retire_blk_tov = retire_ms;
  if (::setsockopt(fd, SOL_PACKET, PACKET_RX_RING, &request, sizeof request) != 0) {
    throw std::runtime_error(fmt::format("nic transport: TPACKET_V3 receive ring of {} blocks of {} bytes: {}",
                                         geometry_.blocks, geometry_.block, std::strerror(errno)));
  }
  void* map = ::mmap(nullptr, geometry_.bytes(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) throw std::runtime_error(fmt::format("nic transport: mmap ring: {}", std::strerror(errno)));
  map_ = static_cast<std::byte*>(map);
}

BlockRing::~BlockRing() {
  if (map_) ::munmap(map_, geometry_.bytes());
}

std::span<const std::byte> BlockRing::peek() {
  while (true) {
    if (!reader_) {
      std::byte* block = map_ + block_ * geometry_.block;
      if (!(load_status(block) & TP_STATUS_USER)) return {};
      reader_.emplace(std::span<const std::byte>(block, geometry_.block));
    }
    if (current_.empty()) current_ = reader_->next();
    if (!current_.empty()) return current_;
    return_block();  // done (or the rest malformed): next block
  }
}

void BlockRing::release() {
  current_ = reader_ ? reader_->next() : std::span<const std::byte>{};
  if (current_.empty() && reader_) return_block();  // its last frame: back to the kernel at once
}

void BlockRing::return_block() {
  if (reader_->malformed()) ++malformed_blocks_;
  reader_.reset();
  __atomic_store_n(&descriptor(map_ + block_ * geometry_.block)->hdr.bh1.block_status, TP_STATUS_KERNEL,
                   __ATOMIC_RELEASE);
  block_ = (block_ + 1) % geometry_.blocks;
}

}  // namespace bsp::transport::nic
