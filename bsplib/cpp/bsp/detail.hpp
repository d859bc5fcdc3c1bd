// bsp/detail.hpp: what the C++ interface's headers share: the check level, the error
// reporting (the C library's style: the call, the rank, the index), the trivially-copyable
// requirement, and the queue numbers.
#pragma once

#include <bsp.h>

#include <bsp/entry.h>

#include <cstddef>
#include <type_traits>
#include <vector>

// Run-time checks of the C++ interface (element indices, slice lengths, futures read
// too early): 1 (default) on, 0 off (-DBSP_CPP_CHECKS=0). The C library's own checks (pids,
// registrations) stay on either way.
#ifndef BSP_CPP_CHECKS
#define BSP_CPP_CHECKS 1
#endif

namespace bsp {

inline constexpr bool checks = BSP_CPP_CHECKS != 0;

namespace detail {

template <class...>
inline constexpr bool always_false = false;

// Stops the job with the message (printed once, as bsp_abort does), prefixed "bsplib: ".
template <class... Args>
[[noreturn, gnu::cold, gnu::noinline]] void fail(const char* format, Args... args) {
  char text[1024];
  std::snprintf(text, sizeof text, format, args...);
  bsp_abort("bsplib: %s", text);
}

// Numbers of the live queues: the lowest free one is taken, so queues constructed and
// destroyed in the same order on every rank have the same numbers everywhere.
inline std::vector<bool>& queue_numbers() {
  static std::vector<bool> used;
  return used;
}
inline unsigned take_queue_number() {
  std::vector<bool>& used = queue_numbers();
  unsigned n = 0;
  while (n < used.size() && used[n]) ++n;
  if (n == used.size()) used.push_back(true);
  used[n] = true;
  return n;
}
inline void free_queue_number(unsigned n) { queue_numbers()[n] = false; }

}  // namespace detail

// The requirement on anything copied as bytes between processes.
template <class T>
concept transferable = std::is_trivially_copyable_v<T>;

}  // namespace bsp
