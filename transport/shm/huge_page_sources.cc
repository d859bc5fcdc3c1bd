// transport/shm/huge_page_sources.cc: moving single-copy sources onto huge pages
// (huge_page_sources.h).
#include "transport/shm/huge_page_sources.h"

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "transport/shm/cross_memory.h"

namespace bsp::transport::shm {

std::string_view HugePageSources::prepare(const void* data, std::size_t size) {
  if (2 * huge_page_bytes(data, size) >= size) return {};
  // Only where the whole huge pages inside would carry most of it (a range not 2 MiB
  // aligned keeps up to 2 MiB at each end on small pages).
  // (Nor where the kernel cannot say what lies on huge pages: a collapse could not be told.)
  if (!collapse_ || 2 * huge_page_interior(data, size) < size || !can_count_huge_pages()) return "4k-pages";
  const auto begin = reinterpret_cast<std::uintptr_t>(data);
  for (Range& range : ranges_) {
    if (range.begin != begin || range.size != size) continue;
    if (range.state != State::seen) return range.state == State::refused ? "not-collapsed" : "4k-pages";
    const int error = collapse_to_huge_pages(data, size);
    if (error != 0 || 2 * huge_page_bytes(data, size) < size) {
      // A busy page (EAGAIN) may be free next time; any other answer stands.
      if (error != EAGAIN) range.state = State::refused;
      last_refusal_ = error != 0 ? fmt::format("madvise(MADV_COLLAPSE): {}", std::strerror(error))
                                 : "still on 4 KiB pages after MADV_COLLAPSE";
      return "not-collapsed";
    }
    range.state = State::collapsed;
    ++collapses_;
    return {};
  }
  ranges_[next_] = Range{begin, size, State::seen};
  next_ = (next_ + 1) % ranges_.size();
  return "4k-pages";
}

}  // namespace bsp::transport::shm
