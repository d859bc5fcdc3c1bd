// transport/shm/huge_page_sources.h: which memory offered for a single copy is worth
// moving onto huge pages first. The kernel copies a peer's memory at memcpy's speed only
// from huge pages (cross_memory.h); ordinary 4 KiB pages go through staging (two copies)
// instead. A range sent a second time is likely sent again and again (a send buffer, an
// array a peer gets from), so then its whole 2 MiB ranges are collapsed onto huge pages
// (MADV_COLLAPSE: a few milliseconds once, for 8 MiB, against a copy saved per transfer).
// Each range is collapsed at most once: memory the kernel splits again, or refuses, stays
// on the two-copy path (but a page busy at that moment, EAGAIN, is tried again next time).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace bsp::transport::shm {

class HugePageSources {
 public:
  explicit HugePageSources(bool collapse) : collapse_(collapse) {}
  // "" when [data, data + size) of this process lies (now) mostly on huge pages, else the
  // reason for --stats: "4k-pages", or "not-collapsed" when the kernel refused.
  std::string_view prepare(const void* data, std::size_t size);
  std::uint64_t collapses() const { return collapses_; }
  // Why the last collapse failed ("" if none did).
  const std::string& last_refusal() const { return last_refusal_; }

 private:
  enum class State : unsigned char { seen, collapsed, refused };
  struct Range {
    std::uintptr_t begin = 0;
    std::size_t size = 0;
    State state = State::seen;
  };
  bool collapse_;
  std::array<Range, 16> ranges_{};  // the last ranges found on 4 KiB pages, replaced in turn
  std::size_t next_ = 0;
  std::uint64_t collapses_ = 0;
  std::string last_refusal_;
};

}  // namespace bsp::transport::shm
