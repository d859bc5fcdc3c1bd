// transport/shm/shm_ring.h: a single-producer single-consumer ring of frames in memory
// shared by two processes (the shm transport's one link from a sender to a receiver).
//
// Layout in the shared mapping (RingLayout):
//   [ head: u64, space wanted: u32 (the producer's line) ][ tail: u64, own line ]
//   [ superstep line 0 ][ superstep line 1 ][ data ]
// head counts bytes the producer has written, tail bytes the consumer has taken; both
// only grow. A frame is `u32 length | bytes`, padded to 8; a frame that would cross the
// end of the data is preceded by a wrap marker and starts again at offset 0.
//
// The other process may be hostile or broken: each side keeps its own index privately
// and only publishes it; what it reads of the other's (head for the consumer, tail for
// the producer) and every length in the data is checked before use, so no value written
// into the mapping can make this process read or write outside the ring. A check that
// fails marks the ring broken (the caller reports the peer lost).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>

namespace bsp::transport::shm {

inline constexpr std::size_t kRingControlBytes = 256;  // head, tail and two superstep lines, a cache line each
inline constexpr std::uint32_t kWrapMarker = 0xFFFFFFFFu;
inline constexpr std::size_t kSuperstepLineBytes = 52;  // records a superstep line carries

// Bytes a frame of `size` takes in the ring.
constexpr std::size_t ring_footprint(std::size_t size) { return (4 + size + 7) & ~std::size_t{7}; }

// The shared words of one ring (placed at the start of its region).
struct RingControl {
  alignas(64) std::atomic<std::uint64_t> head;
  // Set by a producer that found the ring full: the consumer, having made room, clears it
  // and wakes the producer (a full ring must not leave its writer asleep).
  std::atomic<std::uint32_t> space_wanted;
  alignas(64) std::atomic<std::uint64_t> tail;
  // A superstep's whole traffic to the consumer when it fits one cache line (the engine's
  // end of superstep s with at most kSuperstepLineBytes of records before it): written by
  // the producer into line s % 2 instead of a frame, so an empty or small superstep costs
  // each side one line written and one read. `mark` is s + 1 (0: never written), stored
  // last; the line of s is written again only in s + 2, which the producer reaches only
  // after the consumer's end of s + 1, sent once it has taken this one.
  struct alignas(64) SuperstepLine {
    std::atomic<std::uint64_t> mark;
    std::atomic<std::uint32_t> size;
    std::byte records[kSuperstepLineBytes];
  };
  SuperstepLine lines[2];
};
static_assert(sizeof(RingControl::SuperstepLine) == 64);
static_assert(sizeof(RingControl) == kRingControlBytes);

// The producer's side: frames go in, the consumer's tail says how much room is back.
class RingWriter {
 public:
  RingWriter() = default;
  // region: kRingControlBytes + capacity bytes of the mapping; capacity a power of two.
  RingWriter(std::byte* region, std::size_t capacity);

  // Space for a frame of `size` bytes (size <= max_frame()), or an empty span when the
  // ring is full (or broken). Write the frame into it, then commit(size).
  std::span<std::byte> reserve(std::size_t size);
  // Publishes the frame with a full barrier: a load after commit() is ordered after it.
  void commit(std::size_t size);
  // reserve + copy + commit; false when full.
  bool write(std::span<const std::byte> frame);

  std::size_t max_frame() const { return capacity_ / 4; }
  // After a full ring: asks the consumer for a wake-up once it makes room, and says
  // whether it already has (then retry at once).
  bool want_space();
  // True when the consumer has taken frames since the ring was last found full.
  bool consumer_moved() const { return control_ && control_->tail.load(std::memory_order_acquire) != tail_seen_; }
  // The consumer published a tail that cannot be (ahead of head, or more than a ring
  // behind): the peer's memory is not to be trusted any more.
  bool broken() const { return broken_; }

  // Writes superstep's line (records: at most kSuperstepLineBytes) and publishes it with a
  // full barrier (as commit()); false when it does not fit.
  bool post_line(std::uint64_t superstep, std::span<const std::byte> records);

 private:
  bool room_for(std::size_t need);

  RingControl* control_ = nullptr;
  std::byte* data_ = nullptr;
  std::size_t capacity_ = 0;
  std::uint64_t head_ = 0;       // private copy: never read back from the mapping
  std::uint64_t tail_seen_ = 0;  // last tail read (and checked)
  std::size_t reserved_at_ = 0;  // offset of the reserved frame's length word
  bool broken_ = false;
};

// The consumer's side.
class RingReader {
 public:
  RingReader() = default;
  RingReader(std::byte* region, std::size_t capacity);

  // True when the producer has published frames not yet taken (one acquire load).
  bool has_frames() const { return control_ && control_->head.load(std::memory_order_acquire) != tail_; }
  // The next frame, checked (its bytes stay valid until release()); empty when none, or
  // when the ring is broken (see broken()).
  std::span<const std::byte> peek();
  // Gives the frame peek() returned back to the producer (published at once).
  void release();
  // True (once) when the producer asked to be woken when room is made (after release()).
  bool take_space_request() {
    if (!control_ || control_->space_wanted.load(std::memory_order_relaxed) == 0) return false;
    return control_->space_wanted.exchange(0, std::memory_order_acq_rel) != 0;
  }

  bool broken() const { return broken_; }
  const char* broken_why() const { return why_; }

  // The producer's line for superstep, copied into `into` (kSuperstepLineBytes of room):
  // the number of record bytes, or -1 while it is not posted (or broken: a size that
  // cannot be). The bytes are read once, into `into`: check them there.
  long take_line(std::uint64_t superstep, std::byte* into);
  // True when the line take_line() last looked for in vain is posted now (one load; no
  // system call). Only that one: a line of a later superstep (a peer ahead) must not keep
  // a waiting process from blocking while it waits for something else.
  bool line_waiting() const {
    return line_wanted_ != 0 &&
           control_->lines[(line_wanted_ - 1) & 1].mark.load(std::memory_order_acquire) == line_wanted_;
  }

 private:
  bool fail(const char* why);

  RingControl* control_ = nullptr;
  const std::byte* data_ = nullptr;
  std::size_t capacity_ = 0;
  std::uint64_t tail_ = 0;         // private copy: never read back from the mapping
  std::size_t peeked_ = 0;         // footprint of the frame peek() returned (0: none)
  std::uint64_t line_wanted_ = 0;  // mark take_line() looked for and did not find (0: none)
  bool broken_ = false;
  const char* why_ = "";
};

}  // namespace bsp::transport::shm
