// transport/staging.h: the optional Push-Pull capability (paper 002) of a transport whose
// processes share memory (shm): a sender stages large data in memory its peer can read,
// and the peer copies it once instead of the transport carrying it in frames. Where the
// kernel allows, the peer reads the data from where it lies in the sender's memory
// instead (single copy: nothing staged at all). Small supersteps travel whole in one
// shared cache line per direction (superstep lines).
// Transport::staging() returns it, or nullptr for a transport without shared memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

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
  // Called before anything is staged in a superstep, when every peer that pulled what was
  // last staged (in an earlier superstep) has said so (read mark): this superstep stages
  // into that memory again instead of alternating (it is still in cache: 8 MiB staged in
  // each of two halves, with a source and a destination, would fill a 32 MiB L3).
  virtual void reuse_last() {}

  // ---- Single copy: the peer reads this process's memory itself ----
  // Whether `peer` may be told to read `size` bytes at `data` straight from this
  // process's memory (which must then stay as it is until the peer's read mark says it is
  // done): "" yes, else a short reason for --stats ("off", "small", "4k-pages", "refused", ...).
  // It may first move that memory onto huge pages (contents kept): see shm's --shm-collapse.
  virtual std::string_view single_copy_to(int /*peer*/, const void* /*data*/, std::size_t /*size*/) { return "off"; }
  // Copies `size` bytes at `address` of peer's memory into `into`: "" or why it failed
  // (the address is the peer's word: at worst it names memory of its own it did not mean).
  virtual std::string read_peer(int /*peer*/, std::uint64_t /*address*/, std::byte* /*into*/, std::size_t /*size*/) {
    return "no single copy on this path";
  }
  // Read marks, a number each process raises as it finishes reading its peers' memory
  // (monotonic): this process's, and where peer's stands now.
  virtual void publish_read_mark(std::uint64_t /*mark*/) {}
  virtual std::uint64_t read_mark(int /*peer*/) const { return 0; }
  // Staged marks, a number each process raises as it fills staging memory it has already
  // named to its peers (monotonic): (superstep << 32) | the end of the staged bytes written
  // so far, in the order they were staged. A reader copies a transfer piece by piece
  // behind it (the two copies overlap instead of following each other).
  virtual void publish_staged_mark(std::uint64_t /*mark*/) {}
  virtual std::uint64_t staged_mark(int /*peer*/) const { return 0; }
  // A bsp_put's single copy: where `peer` can read `size` bytes at `data` as they are now
  // (whatever the caller does with them next) until moved_read(), or nullptr with the
  // reason for --stats (stage the put then). shm moves the source's pages aside.
  virtual const std::byte* move_put_source(int /*peer*/, const void* /*data*/, std::size_t /*size*/,
                                           std::string_view& why) {
    why = "bsp_put";
    return nullptr;
  }
  // Every peer told to read what move_put_source returned has read it (read mark).
  virtual void moved_read() {}
  // --stats keys of move_put_source's work (" key=value ...", "" when none).
  virtual std::string moved_report() const { return {}; }
  // Ranges single_copy_to moved onto huge pages (for --stats), and why the kernel last
  // refused to ("" when it never did).
  virtual std::uint64_t huge_page_collapses() const { return 0; }
  virtual std::string collapse_refusal() const { return {}; }
  // Why peer cannot read this process's memory ("" when it can, or nothing is known), for --stats.
  virtual std::string single_copy_refusal(int /*peer*/) const { return {}; }

  // ---- Superstep lines: a small superstep's whole traffic in one shared cache line ----
  // Records of at most kSuperstepLineBytes that stand for superstep's traffic to peer
  // (the engine's `end` implied), written to the line peer reads instead of a frame;
  // false when this path has none (send frames). Ordered after every frame sent before.
  static constexpr std::size_t kSuperstepLineBytes = 52;
  virtual bool post_superstep_line(int /*peer*/, std::uint64_t /*superstep*/, std::span<const std::byte> /*records*/) {
    return false;
  }
  // peer's line for superstep, copied into `into` (kSuperstepLineBytes of room): the
  // number of record bytes, or -1 while there is none. Frames peer sent after posting it
  // are seen only after it (a frame received means the line before it is visible).
  virtual long take_superstep_line(int /*peer*/, std::uint64_t /*superstep*/, std::byte* /*into*/) { return -1; }
};

}  // namespace bsp::transport
