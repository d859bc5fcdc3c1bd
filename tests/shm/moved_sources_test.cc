// tests/shm/moved_sources_test.cc: bsp_put sources moved aside (transport/shm/
// moved_sources.h) in one process. What move() returns reads as the source was at the
// call whatever the program does next: writes, reads, system calls reading it, munmap,
// realloc, mremap, MADV_DONTNEED, fork, two threads at once; the program's own memory reads as it
// should (its writes, zeros where it discarded); bytes still aside are found again, with
// their partial end pages taken anew. Skipped where the kernel refuses a userfaultfd that
// handles its own accesses (not root, no CAP_SYS_PTRACE, vm.unprivileged_userfaultfd = 0).
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "transport/shm/moved_sources.h"

namespace {

using bsp::transport::shm::MovedSources;

constexpr std::size_t kMapped = 6u << 20;
constexpr std::size_t kOffset = 100;             // the source starts inside a page...
constexpr std::size_t kSize = (4u << 20) + 333;  // ...and ends inside one

// A private anonymous mapping holding a known pattern (a byte per position).
struct Buffer {
  Buffer() {
    void* at = mmap(nullptr, kMapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    EXPECT_NE(at, MAP_FAILED);
    base = static_cast<unsigned char*>(at);
    for (std::size_t i = 0; i < kMapped; ++i) base[i] = pattern(i);
  }
  ~Buffer() {
    if (base) munmap(base, kMapped);
  }
  static unsigned char pattern(std::size_t i) { return static_cast<unsigned char>(i * 7 + i / 4096); }
  unsigned char* source() const { return base + kOffset; }
  unsigned char* base = nullptr;
};

// Whether [at, at + size) holds the pattern of positions from `first` on.
bool holds_pattern(const void* at, std::size_t first, std::size_t size) {
  const auto* bytes = static_cast<const unsigned char*>(at);
  for (std::size_t i = 0; i < size; ++i) {
    if (bytes[i] != Buffer::pattern(first + i)) return false;
  }
  return true;
}

const std::byte* move_or_skip(MovedSources& moved, const void* data, std::size_t size) {
  std::string_view why;
  const std::byte* aside = moved.move(data, size, false, why);
  if (!aside && why == "no-userfaultfd") return nullptr;
  EXPECT_NE(aside, nullptr) << why;
  return aside;
}

#define MOVE_OR_SKIP(moved, data, size)                                                             \
  ({                                                                                                \
    const std::byte* aside_ = move_or_skip(moved, data, size);                                      \
    if (!aside_) GTEST_SKIP() << "this process may not handle its own faults:" << (moved).report(); \
    aside_;                                                                                         \
  })

TEST(MovedSources, WritesAfterTheCallDoNotReachTheReader) {
  Buffer buffer;
  MovedSources moved;
  const std::byte* aside = MOVE_OR_SKIP(moved, buffer.source(), kSize);
  // The program writes its source at once (the first touch of a range a peer may still
  // read: copied back), in the middle and in both partial end pages.
  buffer.source()[kSize / 2] = 1;
  buffer.source()[0] = 2;
  buffer.source()[kSize - 1] = 3;
  EXPECT_EQ(buffer.source()[kSize / 2], 1);
  EXPECT_TRUE(holds_pattern(buffer.source() + 1, kOffset + 1, kSize / 2 - 1));
  EXPECT_TRUE(holds_pattern(aside, kOffset, kSize));
  moved.readers_done();
  EXPECT_NE(moved.report().find("shm_put_moved=1 shm_put_reused=0 shm_put_moved_back=0 shm_put_copied_back=1"),
            std::string::npos)
      << moved.report();
}

TEST(MovedSources, UntouchedBytesAreFoundAgainAndGivenBackByMoving) {
  Buffer buffer;
  MovedSources moved;
  const std::byte* aside = MOVE_OR_SKIP(moved, buffer.source(), kSize);
  moved.readers_done();
  // The next superstep puts the same bytes, with a partial end page changed meanwhile:
  // found aside, that byte taken anew.
  buffer.source()[kSize - 1] = 9;
  std::string_view why;
  EXPECT_EQ(moved.find(buffer.source(), kSize, why), aside) << why;
  EXPECT_EQ(static_cast<unsigned char>(aside[kSize - 1]), 9);
  // A part of them, while the first is read: found; a change of its end page now is not
  // what the reader reads, so it is refused.
  EXPECT_EQ(moved.find(buffer.source() + 4096, 8192, why), aside + 4096) << why;
  buffer.source()[0] = 5;
  EXPECT_EQ(moved.find(buffer.source(), kSize, why), nullptr);
  EXPECT_EQ(why, "changed-while-read");
  moved.readers_done();
  // No reader now: the program's read gets its pages back by moving.
  EXPECT_TRUE(holds_pattern(buffer.source() + 1, kOffset + 1, kSize - 2));
  EXPECT_NE(moved.report().find("shm_put_reused=2 shm_put_moved_back=1 shm_put_copied_back=0"), std::string::npos)
      << moved.report();
  // The program touched that source while aside (a buffer it refills, say): its next 16
  // puts are staged, then moving it is tried again.
  for (int put = 0; put < 16; ++put) {
    EXPECT_EQ(moved.move(buffer.source(), kSize, false, why), nullptr);
    EXPECT_EQ(why, "rewritten");
  }
  const std::byte* again = MOVE_OR_SKIP(moved, buffer.source(), kSize);
  moved.readers_done();
  // Bytes overlapping a range aside but beyond it are refused (the stager's copy then
  // gives the range back).
  why = {};
  EXPECT_EQ(moved.find(buffer.source(), kSize + 8192, why), nullptr);
  EXPECT_EQ(why, "overlaps-moved");
  EXPECT_TRUE(holds_pattern(again + 1, kOffset + 1, kSize - 2));  // (its end words changed above)
}

TEST(MovedSources, SystemCallsReadTheSource) {
  Buffer buffer;
  MovedSources moved;
  const std::byte* aside = MOVE_OR_SKIP(moved, buffer.source(), kSize);
  int ends[2];
  ASSERT_EQ(pipe(ends), 0);
  ASSERT_EQ(write(ends[1], buffer.source() + 8192, 4096), 4096);  // the kernel reads a page aside
  unsigned char got[4096];
  ASSERT_EQ(read(ends[0], got, sizeof got), 4096);
  EXPECT_TRUE(holds_pattern(got, kOffset + 8192, sizeof got));
  close(ends[0]);
  close(ends[1]);
  EXPECT_TRUE(holds_pattern(aside, kOffset, kSize));
}

TEST(MovedSources, FreedSourceStaysReadable) {
  MovedSources moved;
  auto* buffer = new Buffer;
  const std::byte* aside = MOVE_OR_SKIP(moved, buffer->source(), kSize);
  delete buffer;  // munmap before the sync: the standard allows it
  EXPECT_TRUE(holds_pattern(aside, kOffset, kSize));
  moved.readers_done();
  // A new mapping, maybe at the same place, is the program's own (zeros).
  void* fresh = mmap(nullptr, kMapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(fresh, MAP_FAILED);
  std::vector<unsigned char> zeros(kMapped, 0);
  EXPECT_EQ(std::memcmp(fresh, zeros.data(), kMapped), 0);
  munmap(fresh, kMapped);
}

TEST(MovedSources, ReallocatedSourceKeepsItsBytes) {
  MovedSources moved;
  auto* block = static_cast<unsigned char*>(std::malloc(kSize));  // (its own mapping, at this size)
  ASSERT_NE(block, nullptr);
  for (std::size_t i = 0; i < kSize; ++i) block[i] = Buffer::pattern(i);
  const std::byte* aside = MOVE_OR_SKIP(moved, block, kSize);
  // realloc moves or copies the block (mremap refuses a mapping split around the moved
  // pages: glibc then copies); the bytes follow either way.
  auto* grown = static_cast<unsigned char*>(std::realloc(block, 2 * kSize));
  ASSERT_NE(grown, nullptr);
  EXPECT_TRUE(holds_pattern(grown, 0, kSize));
  EXPECT_TRUE(holds_pattern(aside, 0, kSize));
  std::free(grown);
  moved.readers_done();
}

TEST(MovedSources, PartOfTheSourceMovedElsewhere) {
  Buffer buffer;
  MovedSources moved;
  const std::byte* aside = MOVE_OR_SKIP(moved, buffer.source(), kSize);
  // The second MiB moves away by itself; both parts read as before.
  void* target = mmap(nullptr, 1u << 20, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(target, MAP_FAILED);
  void* part = mremap(buffer.base + (1u << 20), 1u << 20, 1u << 20, MREMAP_MAYMOVE | MREMAP_FIXED, target);
  ASSERT_EQ(part, target);
  EXPECT_TRUE(holds_pattern(part, 1u << 20, 1u << 20));
  EXPECT_TRUE(holds_pattern(buffer.base + (2u << 20), 2u << 20, 1u << 20));
  EXPECT_TRUE(holds_pattern(buffer.base, 0, 1u << 20));
  EXPECT_TRUE(holds_pattern(aside, kOffset, kSize));
  munmap(part, 1u << 20);
  moved.readers_done();
}

TEST(MovedSources, DiscardedPagesReadAsZeros) {
  Buffer buffer;
  MovedSources moved;
  const std::byte* aside = MOVE_OR_SKIP(moved, buffer.source(), kSize);
  ASSERT_EQ(madvise(buffer.base + (1u << 20), 1u << 20, MADV_DONTNEED), 0);
  std::vector<unsigned char> zeros(1u << 20, 0);
  EXPECT_EQ(std::memcmp(buffer.base + (1u << 20), zeros.data(), zeros.size()), 0);
  EXPECT_TRUE(holds_pattern(buffer.base + (2u << 20), 2u << 20, 1u << 20));
  EXPECT_TRUE(holds_pattern(aside, kOffset, kSize));
  moved.readers_done();
}

TEST(MovedSources, ForkedChildReadsTheSource) {
  Buffer buffer;
  MovedSources moved;
  const std::byte* aside = MOVE_OR_SKIP(moved, buffer.source(), kSize);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(holds_pattern(buffer.source(), kOffset, kSize) ? 0 : 1);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_TRUE(holds_pattern(aside, kOffset, kSize));
  EXPECT_TRUE(holds_pattern(buffer.source(), kOffset, kSize));
  moved.readers_done();
}

TEST(MovedSources, ThreadsTouchingAtOnce) {
  Buffer buffer;
  MovedSources moved;
  const std::byte* aside = MOVE_OR_SKIP(moved, buffer.source(), kSize);
  std::vector<std::thread> threads;
  std::vector<int> good(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      const std::size_t at = kSize / 5 * static_cast<std::size_t>(t + 1);
      good[static_cast<std::size_t>(t)] = holds_pattern(buffer.source() + at, kOffset + at, 64);
      buffer.source()[at + 100] = 0;
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int g : good) EXPECT_EQ(g, 1);
  EXPECT_TRUE(holds_pattern(aside, kOffset, kSize));
  moved.readers_done();
}

TEST(MovedSources, RefusesWhatItCannotKeep) {
  MovedSources moved;
  std::string_view why;
  std::vector<unsigned char> small(16u << 10, 1);
  EXPECT_EQ(moved.move(small.data(), small.size(), false, why), nullptr);
  EXPECT_TRUE(why == "small" || why == "no-userfaultfd") << why;
  void* shared = mmap(nullptr, kMapped, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(shared, MAP_FAILED);
  EXPECT_EQ(moved.move(shared, kMapped, false, why), nullptr);
  EXPECT_TRUE(why == "not-private-anonymous" || why == "no-userfaultfd") << why;
  munmap(shared, kMapped);
}

}  // namespace
