// transport/shm/moved_sources.h: a bsp_put over shm in one copy. The standard captures a
// put's source at the call, and the caller may then write or free it before the sync;
// staging copies it there (and the receiver copies it again). Instead, the source's whole
// pages are moved aside (mremap with MREMAP_DONTUNMAP: the page tables move, no byte does)
// into a mapping of this class, which the receiver reads with process_vm_readv; the
// partial pages at either end are copied there (at most 8 KiB). The caller's range is left
// empty and registered with a userfaultfd, so its first touch (a load or store of the
// program, of the library, or of the kernel for a system call) waits while this class's
// thread gives the pages back: moved back (UFFDIO_MOVE, no copy) once no peer may read them
// any more, else copied (the aside pages stay for the reader). Untouched, the pages stay
// aside across supersteps, and a put of the same bytes again costs only the end pages'
// refresh. A range the program unmaps, moves (realloc) or discards (MADV_DONTNEED) is
// followed through the userfaultfd's events; fork() first gives every range back.
// It needs a userfaultfd that also handles the kernel's own accesses (root, CAP_SYS_PTRACE,
// vm.unprivileged_userfaultfd = 1, or access to /dev/userfaultfd), UFFDIO_MOVE (Linux 6.8)
// and PROCMAP_QUERY (6.11), and takes only private anonymous memory; otherwise the put is
// staged (two copies).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "transport/file_descriptor.h"

namespace bsp::transport::shm {

class MovedSources {
 public:
  MovedSources() = default;
  ~MovedSources();  // gives every range back, then stops the thread
  MovedSources(const MovedSources&) = delete;
  MovedSources& operator=(const MovedSources&) = delete;

  // Bytes already aside: where [data, data + size) reads as it is now until
  // readers_done(), else nullptr, with a reason for --stats when they overlap pages aside
  // in a way that cannot be read so (the caller stages the put; its copy gives them back).
  const std::byte* find(const void* data, std::size_t size, std::string_view& why);
  // Moves [data, data + size) aside: where it reads as it is now, or nullptr with the
  // reason ("no-userfaultfd", "not-private-anonymous", ...). Memory on_huge_pages is
  // advised MADV_HUGEPAGE, so that it comes back on huge pages.
  const std::byte* move(const void* data, std::size_t size, bool on_huge_pages, std::string_view& why);
  // Gives back now, by moving, the ranges aside that [data, data + size) overlaps and no
  // peer reads: the library's own reads of that memory (a single copy's checks, a
  // staged copy) find it in place, and on huge pages (a touch may split a huge page).
  void give_back(const void* data, std::size_t size);
  // Every peer told to read what find or move returned has read it: aside pages are now
  // given back by moving, and the copies kept for readers are dropped.
  void readers_done();
  // " shm_put_moved=... shm_put_reused=... shm_put_moved_back=... shm_put_copied_back=..."
  // (nothing before the first move), and why this process cannot move sources, if so.
  std::string report() const;

 private:
  struct Range {
    std::uintptr_t source = 0;  // the put that moved it: its bytes
    std::size_t source_size = 0;
    std::uintptr_t pages = 0, end = 0;        // the caller's pages: the source rounded out
    std::uintptr_t inner = 0, inner_end = 0;  // the whole pages inside, moved aside
    std::uintptr_t aside = 0;                 // where `pages` lies in our mapping
    bool read = false;                        // a peer may read it until readers_done()
    bool given_back = false;                  // aside only for that reader now
  };

  bool start();                      // the userfaultfd and its thread, once
  void serve();                      // the thread: faults and events, one at a time
  void handle(const void* message);  // (under mutex_)
  void give_back(Range& range, std::uintptr_t from, std::uintptr_t to, std::intptr_t shift);  // (under mutex_)
  void give_back_all();                                                                       // (under mutex_)
  void fill(std::uintptr_t dst, std::uintptr_t src, std::size_t len, bool move);              // (under mutex_)
  void take_events();                                                                         // (under mutex_)
  void handle_taken();                                                                        // (under mutex_)
  void forget_given_back();                                                                   // (under mutex_)
  static void before_fork();

  bool started_ = false;
  std::string unavailable_;  // why sources cannot be moved ("" when they can)
  FileDescriptor uffd_, maps_, stop_;
  std::thread thread_;
  mutable std::mutex mutex_;
  std::vector<Range> ranges_;
  // Sources the program touched while aside (a buffer it refills before each put, say):
  // moving them costs more system calls than the copy it saves, so their next puts are
  // staged (reason "rewritten"); moving is tried again after kStagedWhenRewritten of them.
  struct Rewritten {
    std::uintptr_t source = 0;
    std::size_t size = 0;
    int staged_left = 0;
  };
  std::array<Rewritten, 16> rewritten_{};
  std::size_t next_rewritten_ = 0;
  std::pair<std::uintptr_t, std::uintptr_t> moving_{0, 0};  // whole pages being moved aside now
  std::vector<std::array<std::byte, 32>> taken_;            // events read while giving back
  std::uint64_t moved_ = 0, reused_ = 0, moved_back_ = 0, copied_back_ = 0;
};

}  // namespace bsp::transport::shm
