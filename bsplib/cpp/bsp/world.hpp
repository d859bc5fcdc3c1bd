// bsp/world.hpp: start-up (bsp::run) and the world a superstep program sees: its rank,
// the number of processes, sync, time, abort, and log (lines printed by rank 0 at the next
// sync, in rank order).
#pragma once

#include <algorithm>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <bsp/detail.hpp>

namespace bsp {

class world {
 public:
  world() : rank_(bsp_pid()), size_(bsp_nprocs()), log_queue_(detail::take_queue_number()) {}
  ~world() { detail::free_queue_number(log_queue_); }
  world(const world&) = delete;
  world& operator=(const world&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  int active_processors() const { return size_; }  // Bulk's name for size()
  int next_rank() const { return rank_ + 1 == size_ ? 0 : rank_ + 1; }
  int prev_rank() const { return rank_ == 0 ? size_ - 1 : rank_ - 1; }

  // Ends the superstep (bsp_sync); then rank 0 prints the lines logged in it.
  void sync() {
    bsp_sync();
    if (rank_ == 0) print_log();
  }
  // Seconds since the start (bsp_time).
  double time() const { return bsp_time(); }
  // Supersteps completed so far (bsp_sync and the C++ interface's syncs alike).
  long superstep() const { return bsp_cpp_superstep(); }

  // Stops every process; the message (printf-style) is printed once.
  [[noreturn]] void abort(const char* format, ...) __attribute__((format(printf, 2, 3))) {
    char text[4096];
    va_list args;
    va_start(args, format);
    std::vsnprintf(text, sizeof text, format, args);
    va_end(args);
    bsp_abort("%s", text);
  }

  // A line (printf-style) printed by rank 0 after the next world.sync(), the lines of
  // all ranks ordered by rank, then by the order they were logged in. Every rank must
  // call world.sync() (not bsp_sync) for the superstep in which any rank logs.
  void log(const char* format, ...) __attribute__((format(printf, 2, 3))) {
    char text[4096];
    va_list args;
    va_start(args, format);
    int n = std::vsnprintf(text, sizeof text, format, args);
    va_end(args);
    std::uint32_t header[2] = {static_cast<std::uint32_t>(rank_), log_count_++};
    bsp_cpp_piece pieces[2] = {{header, sizeof header},
                               {text, static_cast<std::size_t>(std::clamp(n, 0, int{sizeof text} - 1))}};
    bsp_cpp_queue_send(0, log_queue_, pieces, 2);
  }

 private:
  void print_log() {
    std::size_t count = bsp_cpp_queue_size(log_queue_);
    if (count == 0) return;
    struct Line {
      std::uint32_t rank, order;
      const char* text;
      std::size_t size;
    };
    std::vector<Line> lines;
    lines.reserve(count);
    for (std::size_t i = 0; i < count; ++i) {
      std::size_t size = 0;
      auto* at = static_cast<const char*>(bsp_cpp_queue_message(log_queue_, i, &size));
      if (size < 8) detail::fail("world::log: a log message of %zu bytes", size);
      std::uint32_t header[2];
      std::memcpy(header, at, sizeof header);
      lines.push_back({header[0], header[1], at + 8, size - 8});
    }
    std::stable_sort(lines.begin(), lines.end(), [](const Line& a, const Line& b) {
      return a.rank != b.rank ? a.rank < b.rank : a.order < b.order;
    });
    for (const Line& line : lines) std::printf("%.*s\n", static_cast<int>(line.size), line.text);
    std::fflush(stdout);
  }

  int rank_, size_;
  unsigned log_queue_;
  std::uint32_t log_count_ = 0;
};

// Runs f(world) as the SPMD part on p processes (bsp_begin(p) ... bsp_end()): under bsprun
// or a PMIx launcher the launched processes, started directly p forked local ones. Only
// rank 0 returns from run (with 0), as only pid 0 continues after bsp_end. A last
// world.sync() before bsp_end prints what was logged in the last superstep.
template <class F>
int run(int p, F&& f) {
  bsp_begin(p);
  {
    world w;
    std::forward<F>(f)(w);
    w.sync();  // prints what was logged in the last superstep
  }
  bsp_end();
  return 0;
}

// As run(p, f), p the job's size under a launcher (bsprun -n P, srun), started directly
// the machine's processors (or BSP_PROCESSES). argc and argv are the program's: every
// process gets them.
template <class F>
int run(int /*argc*/, char** /*argv*/, F&& f) {
  return run(bsp_nprocs(), std::forward<F>(f));
}

}  // namespace bsp
