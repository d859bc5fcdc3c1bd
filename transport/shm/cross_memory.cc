// transport/shm/cross_memory.cc: process_vm_readv, yama's ptracer and huge-page
// accounting for single-copy transfers (cross_memory.h).
#include "transport/shm/cross_memory.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <utility>

#include <fmt/format.h>

namespace bsp::transport::shm {
namespace {

// PAGEMAP_SCAN (Linux 6.7, linux/fs.h; not in every distribution's headers yet).
struct PageRegion {
  std::uint64_t start, end, categories;
};
struct PageMapScan {
  std::uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages, category_inverted, category_mask,
      category_anyof_mask, return_mask;
};
constexpr unsigned long kPageMapScan = _IOWR('f', 16, PageMapScan);
constexpr std::uint64_t kPageIsHuge = 1u << 6;
constexpr int kMadvCollapse = 25;  // MADV_COLLAPSE (Linux 6.1; older headers lack it)
constexpr std::uintptr_t kHugePage = 2u << 20;

// The whole huge pages' range inside [address, address + size): [begin, end), maybe empty.
std::pair<std::uintptr_t, std::uintptr_t> interior(const void* address, std::size_t size) {
  const auto first = reinterpret_cast<std::uintptr_t>(address);
  const std::uintptr_t begin = (first + kHugePage - 1) & ~(kHugePage - 1);
  const std::uintptr_t end = (first + size) & ~(kHugePage - 1);
  return {begin, std::max(begin, end)};
}

}  // namespace

void let_siblings_read() {
  std::ifstream scope("/proc/sys/kernel/yama/ptrace_scope");
  int level = 0;
  if (!(scope >> level) || level != 1) return;  // no yama, or it allows (0) or forbids (2, 3) regardless
  ::prctl(PR_SET_PTRACER, static_cast<unsigned long>(::getppid()), 0, 0, 0);
}

std::string read_from(int os_pid, std::uint64_t address, void* into, std::size_t size) {
  std::size_t done = 0;
  while (done < size) {
    iovec local{static_cast<std::byte*>(into) + done, size - done};
    iovec remote{reinterpret_cast<void*>(static_cast<std::uintptr_t>(address + done)), size - done};
    ssize_t got = ::process_vm_readv(os_pid, &local, 1, &remote, 1, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      return fmt::format("process_vm_readv: {} ({})", std::strerror(errno),
                         errno == EPERM ? "ptrace rules: another user, or yama's ptrace_scope" : "no such memory");
    }
    if (got == 0) return fmt::format("process_vm_readv: copied {} of {} bytes", done, size);
    done += static_cast<std::size_t>(got);
  }
  return {};
}

namespace {
int pagemap_fd() {
  static const int pagemap = ::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  return pagemap;
}
}  // namespace

bool can_count_huge_pages() {
  static const bool works = [] {
    static char probe = 1;
    PageRegion region{};
    PageMapScan scan{};
    scan.size = sizeof scan;
    scan.start = reinterpret_cast<std::uintptr_t>(&probe) & ~std::uintptr_t{4095};
    scan.end = scan.start + 4096;
    scan.vec = reinterpret_cast<std::uintptr_t>(&region);
    scan.vec_len = 1;
    scan.category_mask = kPageIsHuge;
    scan.return_mask = kPageIsHuge;
    return pagemap_fd() >= 0 && ::ioctl(pagemap_fd(), kPageMapScan, &scan) >= 0;
  }();
  return works;
}

std::size_t huge_page_bytes(const void* address, std::size_t size) {
  const int pagemap = pagemap_fd();
  if (pagemap < 0 || size == 0) return 0;
  const std::uint64_t page = 4096;
  std::uint64_t start = reinterpret_cast<std::uintptr_t>(address) & ~(page - 1);
  const std::uint64_t end = (reinterpret_cast<std::uintptr_t>(address) + size + page - 1) & ~(page - 1);
  std::size_t huge = 0;
  PageRegion regions[16];
  while (start < end) {
    PageMapScan scan{};
    scan.size = sizeof scan;
    scan.start = start;
    scan.end = end;
    scan.vec = reinterpret_cast<std::uintptr_t>(regions);
    scan.vec_len = std::size(regions);
    scan.category_mask = kPageIsHuge;
    scan.return_mask = kPageIsHuge;
    int found = ::ioctl(pagemap, kPageMapScan, &scan);
    if (found < 0) return 0;
    for (int i = 0; i < found; ++i) huge += regions[i].end - regions[i].start;
    if (scan.walk_end <= start || found < static_cast<int>(std::size(regions))) break;
    start = scan.walk_end;
  }
  return std::min<std::size_t>(huge, size);
}

std::size_t huge_page_interior(const void* address, std::size_t size) {
  auto [begin, end] = interior(address, size);
  return end - begin;
}

int collapse_to_huge_pages(const void* address, std::size_t size) {
  auto [begin, end] = interior(address, size);
  if (begin == end) return EINVAL;
  return ::madvise(reinterpret_cast<void*>(begin), end - begin, kMadvCollapse) == 0 ? 0 : errno;
}

}  // namespace bsp::transport::shm
