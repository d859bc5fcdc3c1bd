// transport/room_layout.h: where frames read for datagram placement (FrameSink::
// datagram_room) land. Frame i's first `lead` bytes (a link header the sink never sees,
// then the sink's placement_head()) go to a heads buffer at heads + i × lead, its next
// `body` bytes to room + i × body, so its payload lies where the sink asked. udp scatters
// its datagrams so (one frame each, or a coalesced run in one datagram), nic its frames.
#pragma once

#include <sys/uio.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <span>

#include "transport/transport.h"

namespace bsp::transport {

struct RoomLayout {
  std::byte* heads;
  std::size_t lead;
  std::span<std::byte> room;
  std::size_t body;

  iovec head_piece(std::size_t i) const { return iovec{heads + i * lead, lead}; }
  iovec body_piece(std::size_t i) const { return iovec{room.data() + i * body, body}; }
  // The link header read in front of frame i (the first `skip` bytes of its lead).
  std::span<const std::byte> link_header(std::size_t i, std::size_t skip) const {
    return std::span<const std::byte>(heads + i * lead, skip);
  }
  // Frame i as the sink takes it, `length` bytes after a link header of `skip` bytes.
  FrameSink::PlacedFrame placed(std::size_t i, std::size_t length, std::size_t skip = 0) const {
    const std::size_t head = lead - skip;
    return FrameSink::PlacedFrame{
        std::span<const std::byte>(heads + i * lead + skip, std::min(length, head)),
        std::span<const std::byte>(room.data() + i * body, length > head ? length - head : 0)};
  }
};

// Copies the first `length` bytes a scattered read left in `pieces` to `into`, in order;
// returns how many there were (fewer where the pieces hold less).
inline std::size_t gather(std::span<const iovec> pieces, std::size_t length, std::byte* into) {
  std::size_t copied = 0;
  for (std::size_t i = 0; i < pieces.size() && copied < length; ++i) {
    const std::size_t size = std::min(pieces[i].iov_len, length - copied);
    std::memcpy(into + copied, pieces[i].iov_base, size);
    copied += size;
  }
  return copied;
}

}  // namespace bsp::transport
