// transport/shm/moved_sources.cc: bsp_put sources moved aside and given back on first
// touch (moved_sources.h).
#include "transport/shm/moved_sources.h"

#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace bsp::transport::shm {
namespace {

// Kernel interfaces newer than the build machine's headers (their ABI is fixed).
constexpr std::uint64_t kFeatureMove = std::uint64_t{1} << 16;  // UFFD_FEATURE_MOVE (Linux 6.8)
struct UffdMove {
  std::uint64_t dst, src, len, mode;
  std::int64_t move;
};
constexpr unsigned long kUffdMove = _IOWR(UFFDIO, 0x05, UffdMove);
constexpr std::uint64_t kMoveAllowSourceHoles = 1u << 1;
struct ProcmapQuery {  // PROCMAP_QUERY on /proc/self/maps (Linux 6.11)
  std::uint64_t size, query_flags, query_addr, vma_start, vma_end, vma_flags, vma_page_size, vma_offset, inode;
  std::uint32_t dev_major, dev_minor, vma_name_size, build_id_size;
  std::uint64_t vma_name_addr, build_id_addr;
};
static_assert(sizeof(ProcmapQuery) == 104);
static_assert(sizeof(uffd_msg) == 32);  // (the header keeps taken events as 32 bytes)
constexpr unsigned long kProcmapQuery = _IOWR('f', 17, ProcmapQuery);
constexpr std::uint64_t kVmaShared = 0x08;

constexpr std::uintptr_t kPage = 4096, kHugePage = 2u << 20;
// Ranges aside at once (each splits the caller's mapping in up to three, and costs a
// mapping of ours), and the fewest whole pages worth the system calls of a move.
constexpr std::size_t kMostRanges = 16;
constexpr std::uintptr_t kLeastInner = 64u << 10;
constexpr int kStagedWhenRewritten = 16;

std::mutex owner_mutex;
MovedSources* fork_owner = nullptr;  // the process's one instance that has started

void unregister(int uffd, std::uintptr_t begin, std::uintptr_t end) {
  if (end <= begin) return;
  uffdio_range range{begin, end - begin};
  ::ioctl(uffd, UFFDIO_UNREGISTER, &range);  // (a range unmapped since: nothing to do)
}

}  // namespace

// Fills [dst, dst + len) of a registered range of the caller's from [src, src + len) of
// ours: pages moved where `move` and the kernel allow, copied otherwise. A page present
// there already, or a range gone, is left as it is; a page the source never had stays
// empty (it reads as zeros once unregistered).
void MovedSources::fill(std::uintptr_t dst, std::uintptr_t src, std::size_t len, bool move) {
  for (std::size_t done = 0; done < len;) {
    long progress = 0;
    int error = 0;
    if (move) {
      UffdMove request{dst + done, src + done, len - done, kMoveAllowSourceHoles, 0};
      if (::ioctl(uffd_.get(), kUffdMove, &request) == 0) return;
      error = errno;
      progress = request.move;
    } else {
      uffdio_copy request{dst + done, src + done, len - done, 0, 0};
      if (::ioctl(uffd_.get(), UFFDIO_COPY, &request) == 0) return;
      error = errno;
      progress = request.copy;
    }
    if (progress > 0) {
      done += static_cast<std::size_t>(progress);
    } else if (error == EAGAIN) {
      // The program is changing its mappings and waits for its event to be read: read
      // it (handled after this), then try again.
      take_events();
      sched_yield();
    } else if (move) {
      move = false;  // (a page shared since a fork, or pinned): copied
    } else {
      done += kPage;
    }
  }
}

// Reads what the userfaultfd holds now, to handle once the present work is done.
void MovedSources::take_events() {
  uffd_msg message;
  while (::read(uffd_.get(), &message, sizeof message) == static_cast<ssize_t>(sizeof message)) {
    std::array<std::byte, sizeof(uffd_msg)> copy;
    std::memcpy(copy.data(), &message, sizeof message);
    taken_.push_back(copy);
  }
}

void MovedSources::handle_taken() {
  while (!taken_.empty()) {
    std::vector<std::array<std::byte, sizeof(uffd_msg)>> now;
    now.swap(taken_);  // (handling may take more)
    for (const auto& message : now) handle(message.data());
  }
}

MovedSources::~MovedSources() {
  if (!started_) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (Range& range : ranges_) range.read = false;  // (the last sync waited for every reader)
    give_back_all();
  }
  {
    std::lock_guard<std::mutex> lock(owner_mutex);
    if (fork_owner == this) fork_owner = nullptr;
  }
  if (thread_.joinable()) {
    const std::uint64_t one = 1;
    [[maybe_unused]] ssize_t written = ::write(stop_.get(), &one, sizeof one);
    thread_.join();
  }
}

bool MovedSources::start() {
  if (started_) return unavailable_.empty();
  started_ = true;
  // Without UFFD_USER_MODE_ONLY: a system call touching a moved range (write(2) from it)
  // waits for the pages like a load does, instead of failing with EFAULT. The system
  // call gives such a userfaultfd to privileged processes; /dev/userfaultfd to whoever
  // its permissions let in (a site may grant a group).
  int fd = static_cast<int>(::syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK));
  if (fd < 0) {
    const int refused = errno;
    FileDescriptor device(::open("/dev/userfaultfd", O_RDWR | O_CLOEXEC));
    fd = device ? ::ioctl(device.get(), USERFAULTFD_IOC_NEW, O_CLOEXEC | O_NONBLOCK) : -1;
    if (fd < 0) {
      unavailable_ = fmt::format("userfaultfd: {} (and /dev/userfaultfd: {})", std::strerror(refused),
                                 std::strerror(errno));
      return false;
    }
  }
  uffd_.reset(fd);
  uffdio_api api{};
  api.api = UFFD_API;
  api.features = UFFD_FEATURE_EVENT_REMAP | UFFD_FEATURE_EVENT_REMOVE | UFFD_FEATURE_EVENT_UNMAP | kFeatureMove;
  if (::ioctl(fd, UFFDIO_API, &api) != 0) {
    unavailable_ = fmt::format("userfaultfd without moves and events: {}", std::strerror(errno));
    return false;
  }
  maps_.reset(::open("/proc/self/maps", O_RDONLY | O_CLOEXEC));
  ProcmapQuery query{};
  query.size = sizeof query;
  query.query_addr = reinterpret_cast<std::uintptr_t>(&query);
  if (!maps_ || ::ioctl(maps_.get(), kProcmapQuery, &query) != 0) {
    unavailable_ = fmt::format("PROCMAP_QUERY: {}", std::strerror(errno));
    return false;
  }
  stop_.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!stop_) {
    unavailable_ = fmt::format("eventfd: {}", std::strerror(errno));
    return false;
  }
  {
    std::lock_guard<std::mutex> lock(owner_mutex);
    if (fork_owner) {
      unavailable_ = "another transport of this process moves sources";
      return false;
    }
    fork_owner = this;
    static const int registered = ::pthread_atfork(&MovedSources::before_fork, nullptr, nullptr);
    (void)registered;
  }
  // The thread takes no signal: the program's handlers run on its own threads.
  sigset_t all, previous;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &previous);
  thread_ = std::thread([this] { serve(); });
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return true;
}

const std::byte* MovedSources::find(const void* data, std::size_t size, std::string_view& why) {
  if (!started_) return nullptr;  // (nothing moved yet: no lock to take)
  const auto begin = reinterpret_cast<std::uintptr_t>(data), end = begin + size;
  const std::uintptr_t pages = begin & ~(kPage - 1), pages_end = (end + kPage - 1) & ~(kPage - 1);
  std::lock_guard<std::mutex> lock(mutex_);
  for (Range& range : ranges_) {
    if (range.given_back || pages_end <= range.pages || range.end <= pages) continue;
    if (begin < range.pages || end > range.end) {
      why = "overlaps-moved";
      return nullptr;
    }
    // The whole pages are as they were (a touch would have given them back); the end
    // pages are the caller's, so what this put takes of them is taken again, or, while a
    // peer may read them, must not have changed.
    auto* at = reinterpret_cast<std::byte*>(range.aside + (begin - range.pages));
    const std::uintptr_t pieces[2][2] = {{begin, std::min(end, range.inner)}, {std::max(begin, range.inner_end), end}};
    for (const auto& piece : pieces) {
      if (piece[1] <= piece[0]) continue;
      auto* into = reinterpret_cast<void*>(range.aside + (piece[0] - range.pages));
      const auto* from = reinterpret_cast<const void*>(piece[0]);
      if (!range.read) {
        std::memcpy(into, from, piece[1] - piece[0]);
      } else if (std::memcmp(into, from, piece[1] - piece[0]) != 0) {
        why = "changed-while-read";
        return nullptr;
      }
    }
    range.read = true;
    ++reused_;
    return at;
  }
  return nullptr;
}

const std::byte* MovedSources::move(const void* data, std::size_t size, bool on_huge_pages, std::string_view& why) {
  if (!start()) {
    why = "no-userfaultfd";
    return nullptr;
  }
  const auto begin = reinterpret_cast<std::uintptr_t>(data), end = begin + size;
  const std::uintptr_t pages = begin & ~(kPage - 1), pages_end = (end + kPage - 1) & ~(kPage - 1);
  const std::uintptr_t inner = (begin + kPage - 1) & ~(kPage - 1), inner_end = end & ~(kPage - 1);
  if (inner_end < inner + kLeastInner) {
    why = "small";
    return nullptr;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (Rewritten& known : rewritten_) {
      if (known.source == begin && known.size == size && known.staged_left > 0) {
        --known.staged_left;
        why = "rewritten";
        return nullptr;
      }
    }
  }
  ProcmapQuery query{};
  query.size = sizeof query;
  query.query_addr = inner;
  if (::ioctl(maps_.get(), kProcmapQuery, &query) != 0 || (query.vma_flags & kVmaShared) != 0 || query.inode != 0 ||
      query.dev_major != 0 || query.vma_page_size != kPage) {
    why = "not-private-anonymous";
    return nullptr;
  }
  // mremap moves one mapping's pages. (A range given back stays a mapping of its own: its
  // pages no longer share their neighbours' reverse map, so the kernel keeps them apart.)
  if (query.vma_start > inner || query.vma_end < inner_end) {
    why = "spans-mappings";
    return nullptr;
  }
  std::unique_lock<std::mutex> lock(mutex_);
  std::size_t aside_now = 0;
  for (const Range& range : ranges_) aside_now += range.given_back ? 0 : 1;
  if (aside_now >= kMostRanges) {
    // The oldest range no peer reads goes back to make room.
    auto idle = std::find_if(ranges_.begin(), ranges_.end(), [](const Range& r) { return !r.given_back && !r.read; });
    if (idle == ranges_.end()) {
      why = "too-many-moved";
      return nullptr;
    }
    give_back(*idle, idle->inner, idle->inner_end, 0);
    forget_given_back();
  }
  // Our mapping sits at the caller's offset within a huge page: the kernel moves a huge
  // page's table entry whole only between addresses aligned alike.
  const std::size_t span = pages_end - pages;
  void* reserved = ::mmap(nullptr, span + kHugePage, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (reserved == MAP_FAILED) {
    why = "no-memory";
    return nullptr;
  }
  const auto base = reinterpret_cast<std::uintptr_t>(reserved);
  const std::uintptr_t aside = base + ((pages - base) & (kHugePage - 1));
  if (aside > base) ::munmap(reserved, aside - base);
  if (base + kHugePage > aside) ::munmap(reinterpret_cast<void*>(aside + span), base + kHugePage - aside);
  if (pages < inner) std::memcpy(reinterpret_cast<void*>(aside), reinterpret_cast<void*>(pages), kPage);
  if (inner_end < pages_end) {
    std::memcpy(reinterpret_cast<void*>(aside + (inner_end - pages)), reinterpret_cast<void*>(inner_end), kPage);
  }
  // Memory on huge pages stays there: a touch of a range aside would otherwise give its
  // 2 MiB part a page table of small pages (the fault path does so before it asks this
  // thread), and the move back would split the huge page into it.
  if (on_huge_pages) ::madvise(reinterpret_cast<void*>(inner), inner_end - inner, MADV_HUGEPAGE);
  uffdio_register registration{};
  registration.range = {inner, inner_end - inner};
  registration.mode = UFFDIO_REGISTER_MODE_MISSING;
  if (::ioctl(uffd_.get(), UFFDIO_REGISTER, &registration) != 0) {
    ::munmap(reinterpret_cast<void*>(aside), span);
    why = "not-registered";  // (another userfaultfd holds it, or memory it does not take)
    return nullptr;
  }
  // The move raises a remap event that the thread must read (under mutex_) before
  // mremap returns. Until the range is listed, a touch of it is woken to fault again.
  moving_ = {inner, inner_end};
  lock.unlock();
  void* moved = ::mremap(reinterpret_cast<void*>(inner), inner_end - inner, inner_end - inner,
                         MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP,
                         reinterpret_cast<void*>(aside + (inner - pages)));
  lock.lock();
  moving_ = {0, 0};
  if (moved == MAP_FAILED) {
    unregister(uffd_.get(), inner, inner_end);
    ::munmap(reinterpret_cast<void*>(aside), span);
    why = "not-moved";
    return nullptr;
  }
  // The moved mapping kept the registration: a peer reading a page the caller never had
  // must find zeros there, not wait for this thread. Nor does a child of fork() inherit it.
  unregister(uffd_.get(), aside + (inner - pages), aside + (inner_end - pages));
  ::madvise(reinterpret_cast<void*>(aside), span, MADV_DONTFORK);
  ranges_.push_back(Range{begin, size, pages, pages_end, inner, inner_end, aside, true, false});
  ++moved_;
  return reinterpret_cast<const std::byte*>(aside + (begin - pages));
}

void MovedSources::give_back(const void* data, std::size_t size) {
  if (!started_) return;
  const auto begin = reinterpret_cast<std::uintptr_t>(data), end = begin + size;
  std::lock_guard<std::mutex> lock(mutex_);
  for (Range& range : ranges_) {
    if (!range.given_back && !range.read && range.inner < end && begin < range.inner_end) {
      give_back(range, range.inner, range.inner_end, 0);
    }
  }
  forget_given_back();
}

void MovedSources::readers_done() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (Range& range : ranges_) range.read = false;
  forget_given_back();
}

std::string MovedSources::report() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string report;
  if (moved_ > 0) {
    report = fmt::format(" shm_put_moved={} shm_put_reused={} shm_put_moved_back={} shm_put_copied_back={}", moved_,
                         reused_, moved_back_, copied_back_);
  }
  if (!unavailable_.empty()) {
    std::string why = unavailable_;
    std::replace(why.begin(), why.end(), ' ', '_');
    report += " shm_put_not_moved:" + why;
  }
  return report;
}

void MovedSources::serve() {
  for (;;) {
    pollfd watched[2] = {{uffd_.get(), POLLIN, 0}, {stop_.get(), POLLIN, 0}};
    if (::poll(watched, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (watched[1].revents != 0) return;
    std::lock_guard<std::mutex> lock(mutex_);
    uffd_msg message;
    if (::read(uffd_.get(), &message, sizeof message) != static_cast<ssize_t>(sizeof message)) continue;
    handle(&message);
    handle_taken();
  }
}

void MovedSources::handle(const void* raw) {
  const auto& message = *static_cast<const uffd_msg*>(raw);
  switch (message.event) {
    case UFFD_EVENT_PAGEFAULT: {
      const auto address = static_cast<std::uintptr_t>(message.arg.pagefault.address);
      for (Range& range : ranges_) {
        if (range.given_back || address < range.inner || address >= range.inner_end) continue;
        rewritten_[next_rewritten_] = Rewritten{range.source, range.source_size, kStagedWhenRewritten};
        next_rewritten_ = (next_rewritten_ + 1) % rewritten_.size();
        give_back(range, range.inner, range.inner_end, 0);
        forget_given_back();
        return;
      }
      // A range being moved aside now: the toucher tries again once it is listed. A page
      // given back since (present, or no longer registered): it is awake already, or
      // wakes. Else a page the program moved while it was being given back (threads racing
      // over the same memory): it reads zeros rather than waiting for ever.
      uffdio_range page{address & ~(kPage - 1), kPage};
      if (address < moving_.first || address >= moving_.second) {
        uffdio_zeropage zeros{page, 0, 0};
        if (::ioctl(uffd_.get(), UFFDIO_ZEROPAGE, &zeros) == 0) return;
      }
      ::ioctl(uffd_.get(), UFFDIO_WAKE, &page);
      return;
    }
    case UFFD_EVENT_REMAP: {
      // The program moved memory (mremap, realloc): a range wholly inside moves with it;
      // a range cut by it goes back where each of its pages now lies.
      const auto from = static_cast<std::uintptr_t>(message.arg.remap.from);
      const auto to = static_cast<std::uintptr_t>(message.arg.remap.to);
      const auto len = static_cast<std::uintptr_t>(message.arg.remap.len);
      for (Range& range : ranges_) {
        if (range.given_back || range.inner_end <= from || from + len <= range.inner) continue;
        if (from <= range.pages && range.end <= from + len) {
          const std::uintptr_t shift = to - from;
          range.pages += shift, range.end += shift, range.inner += shift, range.inner_end += shift;
          continue;
        }
        const std::uintptr_t cut = std::max(range.inner, from), cut_end = std::min(range.inner_end, from + len);
        give_back(range, range.inner, cut, 0);
        give_back(range, cut, cut_end, static_cast<std::intptr_t>(to - from));
        give_back(range, cut_end, range.inner_end, 0);
      }
      forget_given_back();
      return;
    }
    case UFFD_EVENT_UNMAP:
    case UFFD_EVENT_REMOVE: {
      // The program let go of (part of) a range (munmap, MADV_DONTNEED): that part stays
      // empty (zeros, if still mapped); the rest goes back.
      const auto gone = static_cast<std::uintptr_t>(message.arg.remove.start);
      const auto gone_end = static_cast<std::uintptr_t>(message.arg.remove.end);
      for (Range& range : ranges_) {
        if (range.given_back || range.inner_end <= gone || gone_end <= range.inner) continue;
        give_back(range, range.inner, std::max(range.inner, gone), 0);
        give_back(range, std::min(range.inner_end, gone_end), range.inner_end, 0);
        unregister(uffd_.get(), std::max(range.inner, gone), std::min(range.inner_end, gone_end));
      }
      forget_given_back();
      return;
    }
    default:
      return;
  }
}

// Gives the caller back [from, to) of range's whole pages, which now lie `shift` bytes
// further: moved while no peer may read them, else copied (through fresh memory moved
// in whole, which beats the kernel's copy page by page).
void MovedSources::give_back(Range& range, std::uintptr_t from, std::uintptr_t to, std::intptr_t shift) {
  range.given_back = true;
  if (to <= from) return;
  const std::uintptr_t source = range.aside + (from - range.pages), len = to - from;
  const std::uintptr_t into = from + static_cast<std::uintptr_t>(shift);
  if (!range.read) {
    fill(into, source, len, true);
    ++moved_back_;
  } else {
    void* fresh = ::mmap(nullptr, len + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (fresh == MAP_FAILED) {
      fill(into, source, len, false);
    } else {
      const auto base = reinterpret_cast<std::uintptr_t>(fresh);
      const std::uintptr_t copy = base + ((into - base) & (kHugePage - 1));
      ::madvise(reinterpret_cast<void*>(copy), len, MADV_HUGEPAGE);
      std::memcpy(reinterpret_cast<void*>(copy), reinterpret_cast<const void*>(source), len);
      fill(into, copy, len, true);
      ::munmap(fresh, len + kHugePage);
    }
    ++copied_back_;
  }
  unregister(uffd_.get(), into, into + len);
}

void MovedSources::give_back_all() {
  for (Range& range : ranges_) {
    if (!range.given_back) give_back(range, range.inner, range.inner_end, 0);
  }
  forget_given_back();
  handle_taken();
}

// Ranges given back whose aside pages no peer may read any more: their mapping goes.
void MovedSources::forget_given_back() {
  std::erase_if(ranges_, [](const Range& range) {
    if (!range.given_back || range.read) return false;
    ::munmap(reinterpret_cast<void*>(range.aside), range.end - range.pages);
    return true;
  });
}

// fork() would copy the caller's empty ranges (and not our mapping, nor the
// registration): the child would read zeros. Every range is given back first.
void MovedSources::before_fork() {
  std::lock_guard<std::mutex> owner(owner_mutex);
  if (!fork_owner) return;
  std::lock_guard<std::mutex> lock(fork_owner->mutex_);
  fork_owner->give_back_all();
}

}  // namespace bsp::transport::shm
