// transport/staging.h: the optional Push-Pull capability (paper 002) of a transport whose
// processes share memory (shm): a sender stages large data in memory its peer can read,
// and the peer copies it once instead of the transport carrying it in frames.
// Transport::staging() returns it, or nullptr for a transport without shared memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace bsp::transport {

class Staging {
 public:
  virtual ~Staging() = default;
  // `size` bytes of this process's staging memory that `peer` can copy from directly, and
  // the token naming them; nullptr when there is none for this peer, or no room (send the
  // data instead). What is staged in one superstep stays until the end of the next
  // (next_superstep() is called at each superstep's end: staging is reused every other).
  virtual std::byte* stage(int peer, std::size_t size, std::uint64_t& token) = 0;
  // The `size` bytes peer staged under `token`, checked against its staging memory;
  // empty when they cannot be there (a broken or hostile peer).
  virtual std::span<const std::byte> staged(int peer, std::uint64_t token, std::size_t size) = 0;
  virtual void next_superstep() = 0;
};

}  // namespace bsp::transport
