// tests/transport/shm_ring_test.cc: the shm transport's checked ring (transport/shm/
// shm_ring.h) and inbox mapping (shm_segment.h) on their own. The rings live between
// PROT_NONE guard pages with their data ending at the upper one, so a read past the data
// crashes the test rather than passing unseen; "hostile" cases write into the shared
// words and the data what a broken or malicious peer could, and check that the side under
// test refuses (broken(), an empty span) and never hands out a span outside its data.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <deque>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>

#include "auth/mac.h"
#include "transport/shm/shm_ring.h"
#include "transport/shm/shm_segment.h"

namespace bsp::transport::shm {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// A ring region (kRingControlBytes + capacity) in its own mapping, between two PROT_NONE
// pages, the data ending exactly at the upper one. shared: MAP_SHARED (survives fork).
class GuardedRing {
 public:
  explicit GuardedRing(std::size_t capacity, bool shared = false) : capacity_(capacity) {
    page_ = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    const std::size_t pages = (kRingControlBytes + capacity + page_ - 1) / page_;
    bytes_ = (pages + 2) * page_;
    void* base = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, (shared ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS,
                        -1, 0);
    if (base == MAP_FAILED) throw std::runtime_error("mmap");
    base_ = static_cast<std::byte*>(base);
    ::mprotect(base_, page_, PROT_NONE);
    ::mprotect(base_ + (pages + 1) * page_, page_, PROT_NONE);
    region_ = base_ + (pages + 1) * page_ - (kRingControlBytes + capacity);
    new (region_) RingControl{};
  }
  ~GuardedRing() { ::munmap(base_, bytes_); }
  GuardedRing(const GuardedRing&) = delete;
  GuardedRing& operator=(const GuardedRing&) = delete;

  std::byte* region() const { return region_; }
  std::byte* data() const { return region_ + kRingControlBytes; }
  std::size_t capacity() const { return capacity_; }
  RingControl& control() const { return *reinterpret_cast<RingControl*>(region_); }
  // Writes a u32 into the data at offset `at` (a length word or a wrap marker).
  void put_u32(std::size_t at, std::uint32_t value) const { std::memcpy(data() + at, &value, 4); }

  // Whether frame lies wholly inside the data.
  bool inside(std::span<const std::byte> frame) const {
    return frame.data() >= data() && frame.size() <= capacity_ && frame.data() + frame.size() <= data() + capacity_;
  }

 private:
  std::size_t capacity_;
  std::size_t page_ = 0;
  std::size_t bytes_ = 0;
  std::byte* base_ = nullptr;
  std::byte* region_ = nullptr;
};

std::byte pattern(std::uint64_t sequence, std::size_t i) {
  return static_cast<std::byte>((sequence * 131 + i * 7 + 1) & 0xFF);
}

void fill(std::span<std::byte> frame, std::uint64_t sequence) {
  for (std::size_t i = 0; i < frame.size(); ++i) frame[i] = pattern(sequence, i);
}

::testing::AssertionResult holds(std::span<const std::byte> frame, std::uint64_t sequence, std::size_t size) {
  if (frame.size() != size) {
    return ::testing::AssertionFailure() << "frame " << sequence << " has " << frame.size() << " bytes, want " << size;
  }
  for (std::size_t i = 0; i < frame.size(); ++i) {
    if (frame[i] != pattern(sequence, i)) return ::testing::AssertionFailure() << "frame " << sequence << " byte " << i;
  }
  return ::testing::AssertionSuccess();
}

// Writes a frame of `size` bytes with sequence's pattern; false when the ring refuses.
bool write_frame(RingWriter& writer, std::uint64_t sequence, std::size_t size) {
  std::span<std::byte> space = writer.reserve(size);
  if (space.data() == nullptr) return false;
  EXPECT_EQ(space.size(), size);
  fill(space, sequence);
  writer.commit(size);
  return true;
}

// ---- the ring between two honest sides -------------------------------------------------

TEST(ShmRing, RandomSizedFramesRoundTripInOrderThroughManyWraps) {
  GuardedRing ring(4096);
  RingWriter writer(ring.region(), ring.capacity());
  RingReader reader(ring.region(), ring.capacity());
  const std::size_t max = writer.max_frame();
  ASSERT_EQ(max, 1024u);
  std::mt19937_64 random(20240613);
  auto random_size = [&]() -> std::size_t {
    switch (random() % 8) {
      case 0:
        return 0;
      case 1:
        return max;
      case 2:
        return random() % 16;
      default:
        return random() % (max + 1);
    }
  };
  std::deque<std::pair<std::uint64_t, std::size_t>> expected;
  std::uint64_t written = 0, read = 0, wraps = 0, full = 0;
  const std::byte* previous = nullptr;
  bool saw_empty = false, saw_max = false;
  while (read < 30000) {
    // A burst of writes (through write() or reserve/commit), stopping when full.
    for (int burst = static_cast<int>(random() % 12); burst >= 0; --burst) {
      const std::size_t size = random_size();
      bool ok;
      if (random() % 2) {
        // (An empty vector's data() is nullptr: see AnEmptyFrameWithoutStorageIsWritten.)
        std::vector<std::byte> frame(size);
        fill(frame, written);
        ok = writer.write(frame);
      } else {
        ok = write_frame(writer, written, size);
      }
      if (!ok) {
        ++full;
        break;
      }
      expected.emplace_back(written++, size);
    }
    ASSERT_FALSE(writer.broken());
    // A burst of reads.
    for (int burst = static_cast<int>(random() % 12); burst >= 0; --burst) {
      ASSERT_EQ(reader.has_frames(), !expected.empty());
      std::span<const std::byte> frame = reader.peek();
      if (expected.empty()) {
        ASSERT_EQ(frame.data(), nullptr);
        break;
      }
      ASSERT_NE(frame.data(), nullptr) << reader.broken_why();
      ASSERT_TRUE(ring.inside(frame));
      ASSERT_TRUE(holds(frame, expected.front().first, expected.front().second));
      saw_empty |= frame.empty();
      saw_max |= frame.size() == max;
      if (previous && frame.data() < previous) ++wraps;
      previous = frame.data();
      reader.release();
      expected.pop_front();
      ++read;
    }
    ASSERT_FALSE(reader.broken()) << reader.broken_why();
  }
  EXPECT_TRUE(saw_empty);
  EXPECT_TRUE(saw_max);
  EXPECT_GT(wraps, 1000u);
  EXPECT_GT(full, 100u);
  // A frame over max_frame is refused without breaking anything.
  EXPECT_EQ(writer.reserve(max + 1).data(), nullptr);
  EXPECT_FALSE(writer.broken());
}

TEST(ShmRing, AFullRingRefusesAndAcceptsAgainAfterRelease) {
  for (std::size_t size : {std::size_t{100}, std::size_t{0}}) {
    SCOPED_TRACE(size);
    GuardedRing ring(4096);
    RingWriter writer(ring.region(), ring.capacity());
    RingReader reader(ring.region(), ring.capacity());
    std::uint64_t written = 0;
    while (write_frame(writer, written, size)) ++written;
    ASSERT_EQ(written, ring.capacity() / ring_footprint(size));  // 39 frames of 100 B; 512 empty
    std::span<std::byte> refused = writer.reserve(size);
    EXPECT_EQ(refused.data(), nullptr);
    EXPECT_TRUE(refused.empty());
    std::vector<std::byte> frame(size);
    EXPECT_FALSE(writer.write(frame));
    EXPECT_FALSE(writer.broken());

    // The consumer gives one frame back: the next one fits (wrapping for 100 B frames).
    std::span<const std::byte> first = reader.peek();
    ASSERT_TRUE(holds(first, 0, size));
    reader.release();
    ASSERT_TRUE(write_frame(writer, written, size));
    ++written;
    EXPECT_EQ(writer.reserve(size).data(), nullptr);  // and full again
    for (std::uint64_t sequence = 1; sequence < written; ++sequence) {
      std::span<const std::byte> next = reader.peek();
      ASSERT_NE(next.data(), nullptr) << sequence;
      ASSERT_TRUE(ring.inside(next));
      ASSERT_TRUE(holds(next, sequence, size));
      reader.release();
    }
    EXPECT_EQ(reader.peek().data(), nullptr);
    EXPECT_FALSE(reader.broken());
    EXPECT_FALSE(writer.broken());
  }
}

// An empty frame whose span has no storage (data() == nullptr) is written without
// handing memcpy a null pointer (undefined behaviour; UBSan reported it before the fix).
TEST(ShmRing, AnEmptyFrameWithoutStorageIsWritten) {
  GuardedRing ring(4096);
  RingWriter writer(ring.region(), ring.capacity());
  RingReader reader(ring.region(), ring.capacity());
  ASSERT_TRUE(writer.write(std::span<const std::byte>{}));
  std::span<const std::byte> frame = reader.peek();
  EXPECT_NE(frame.data(), nullptr);  // an empty frame is there (not "none")
  EXPECT_TRUE(ring.inside(frame));
  EXPECT_EQ(frame.size(), 0u);
  reader.release();
  EXPECT_EQ(reader.peek().data(), nullptr);
  EXPECT_FALSE(reader.broken());
}

// ---- a hostile producer: the consumer's checks -----------------------------------------

// A ring where 3 frames of 8 bytes were written and 2 taken (tail 32, head 48).
struct ConsumerFixture {
  GuardedRing ring{4096};
  RingWriter writer{ring.region(), ring.capacity()};
  RingReader reader{ring.region(), ring.capacity()};
  ConsumerFixture() {
    for (std::uint64_t sequence = 0; sequence < 3; ++sequence) EXPECT_TRUE(write_frame(writer, sequence, 8));
    for (std::uint64_t sequence = 0; sequence < 2; ++sequence) {
      EXPECT_TRUE(holds(reader.peek(), sequence, 8));
      reader.release();
    }
    EXPECT_EQ(ring.control().tail.load(), 32u);
    EXPECT_EQ(ring.control().head.load(), 48u);
  }
  // peek() refuses now and later, with a reason.
  void expect_refused() {
    std::span<const std::byte> frame = reader.peek();
    EXPECT_EQ(frame.data(), nullptr);
    EXPECT_TRUE(frame.empty());
    EXPECT_TRUE(reader.broken());
    ASSERT_NE(reader.broken_why(), nullptr);
    EXPECT_GT(std::strlen(reader.broken_why()), 0u);
    EXPECT_EQ(reader.peek().data(), nullptr);    // broken stays broken
    EXPECT_EQ(ring.control().tail.load(), 32u);  // and it gave nothing back it had not taken
  }
};

TEST(ShmRing, ConsumerRefusesAGarbageHead) {
  const std::uint64_t capacity = 4096, tail = 32;
  const std::pair<const char*, std::uint64_t> cases[] = {
      {"ahead by more than the capacity", tail + capacity + 8},
      {"ahead by three capacities", tail + 3 * capacity},
      {"not a multiple of 8", 48 + 5},
      {"one byte ahead", tail + 1},
      {"behind tail", tail - 8},
      {"zero (behind tail)", 0},
      {"all ones", ~std::uint64_t{0}},
  };
  for (const auto& [name, head] : cases) {
    SCOPED_TRACE(name);
    ConsumerFixture fixture;
    fixture.ring.control().head.store(head);
    fixture.expect_refused();
    fixture.ring.control().head.store(48);  // put back: still broken
    EXPECT_EQ(fixture.reader.peek().data(), nullptr);
    EXPECT_TRUE(fixture.reader.broken());
  }
  // The honest head still reads (the fixture itself is fine).
  ConsumerFixture honest;
  EXPECT_TRUE(holds(honest.reader.peek(), 2, 8));
  EXPECT_FALSE(honest.reader.broken());
}

TEST(ShmRing, ConsumerRefusesAFrameLengthPastWhatWasPublished) {
  // Frame 2 sits at offset 32 (head 48: 16 bytes published there).
  const std::pair<const char*, std::uint32_t> lengths[] = {
      {"huge", 0x7FFFFFFFu},
      {"one below the wrap marker", 0xFFFFFFFEu},
      {"within max_frame but past head", 100},
      {"one past the published bytes", 13},  // footprint 24 > 16
  };
  for (const auto& [name, length] : lengths) {
    SCOPED_TRACE(name);
    ConsumerFixture fixture;
    fixture.ring.put_u32(32, length);
    fixture.expect_refused();
  }
}

TEST(ShmRing, ConsumerRefusesAFrameOverMaxFrameEvenWhenPublished) {
  // The whole ring published (head = tail + capacity) and a length of max_frame + 1: only
  // the max_frame check can refuse it.
  ConsumerFixture fixture;
  fixture.ring.control().head.store(32 + 4096);
  fixture.ring.put_u32(32, static_cast<std::uint32_t>(fixture.writer.max_frame() + 1));
  fixture.expect_refused();
}

// A consumer whose tail is at capacity - 16 (frames of 8 bytes written and taken).
struct NearTheEnd {
  GuardedRing ring{4096};
  RingWriter writer{ring.region(), ring.capacity()};
  RingReader reader{ring.region(), ring.capacity()};
  std::uint64_t tail = 0;
  NearTheEnd() {
    for (std::uint64_t sequence = 0; tail < 4096 - 16; ++sequence, tail += 16) {
      EXPECT_TRUE(write_frame(writer, sequence, 8));
      EXPECT_TRUE(holds(reader.peek(), sequence, 8));
      reader.release();
    }
    EXPECT_EQ(ring.control().tail.load(), 4096u - 16);
  }
};

TEST(ShmRing, ConsumerRefusesAFrameThatCrossesTheEndOfTheData) {
  NearTheEnd ring;
  // length 50: footprint 56, within max_frame and within the 64 bytes published, but
  // 4080 + 56 runs past the data's end.
  ring.ring.put_u32(4080, 50);
  ring.ring.control().head.store(ring.tail + 64);
  std::span<const std::byte> frame = ring.reader.peek();
  EXPECT_EQ(frame.data(), nullptr);
  EXPECT_TRUE(ring.reader.broken());
  EXPECT_GT(std::strlen(ring.reader.broken_why()), 0u);
}

TEST(ShmRing, ConsumerRefusesAWrapMarkerPointingPastHead) {
  {
    SCOPED_TRACE("at offset 0: the marker skips the whole ring, 16 bytes published");
    ConsumerFixture fixture;
    fixture.ring.put_u32(32, kWrapMarker);
    fixture.expect_refused();
  }
  {
    SCOPED_TRACE("16 bytes before the end, 8 bytes published");
    NearTheEnd ring;
    ring.ring.put_u32(4080, kWrapMarker);
    ring.ring.control().head.store(ring.tail + 8);
    EXPECT_EQ(ring.reader.peek().data(), nullptr);
    EXPECT_TRUE(ring.reader.broken());
    EXPECT_GT(std::strlen(ring.reader.broken_why()), 0u);
    // Refused before skipping: the consumer never publishes a tail past the head.
    EXPECT_EQ(ring.ring.control().tail.load(), ring.tail);
  }
  {
    SCOPED_TRACE("a marker that points exactly at head, then nothing: no frame, not broken");
    NearTheEnd ring;
    ring.ring.put_u32(4080, kWrapMarker);
    ring.ring.control().head.store(ring.tail + 16);
    EXPECT_EQ(ring.reader.peek().data(), nullptr);
    EXPECT_FALSE(ring.reader.broken()) << ring.reader.broken_why();
  }
  {
    SCOPED_TRACE("an honest wrap written by hand is followed");
    NearTheEnd ring;
    ring.ring.put_u32(4080, kWrapMarker);
    ring.ring.put_u32(0, 8);
    ring.ring.control().head.store(ring.tail + 16 + 16);
    std::span<const std::byte> frame = ring.reader.peek();
    EXPECT_EQ(frame.data(), ring.ring.data() + 4);
    EXPECT_EQ(frame.size(), 8u);
    EXPECT_FALSE(ring.reader.broken());
  }
}

// A producer writing at random into head and the data: whatever it does, every span the
// consumer hands out lies inside the data and is at most max_frame long (the guard page
// after the data would also catch a stray read of a length word).
TEST(ShmRing, ConsumerNeverHandsOutASpanOutsideTheDataWhateverTheProducerWrites) {
  const std::size_t capacity = 4096;
  int broken = 0, frames = 0;
  for (std::uint64_t seed = 1; seed <= 1000; ++seed) {
    GuardedRing ring(capacity);
    RingReader reader(ring.region(), capacity);
    std::mt19937_64 random(seed);
    for (int step = 0; step < 400 && !reader.broken(); ++step) {
      const std::uint64_t tail = ring.control().tail.load();
      const std::uint64_t what = random() % 20;
      if (what < 8) {  // a plausible head: tail + a multiple of 8 within the ring
        ring.control().head.store(tail + 8 * (random() % (capacity / 8 + 1)));
      } else if (what < 9) {  // anything near tail
        ring.control().head.store(tail + random() % (2 * capacity) - capacity / 2);
      } else if (what < 15) {  // a length word at tail: mostly small, or near the limits
        const std::uint32_t lengths[] = {static_cast<std::uint32_t>(random() % 64),
                                         static_cast<std::uint32_t>(random() % 256),
                                         static_cast<std::uint32_t>(random() % 1024),
                                         static_cast<std::uint32_t>(capacity / 4 - 8 + random() % 16),
                                         static_cast<std::uint32_t>(capacity - 8 + random() % 16),
                                         kWrapMarker,
                                         static_cast<std::uint32_t>(random())};
        const std::uint64_t pick = random() % 10;
        ring.put_u32(tail & (capacity - 1), lengths[pick < 4 ? pick % 3 : pick - 3]);
      } else if (what < 17) {  // a length word anywhere
        ring.put_u32(8 * (random() % (capacity / 8)), static_cast<std::uint32_t>(random() % (capacity / 2)));
      }
      std::span<const std::byte> frame = reader.peek();
      if (frame.data() == nullptr) continue;
      ASSERT_TRUE(ring.inside(frame)) << "seed " << seed << " step " << step;
      ASSERT_LE(frame.size(), capacity / 4);
      std::size_t touched = 0;  // read every byte: a stray span would hit a guard page
      for (std::byte b : frame) touched += static_cast<std::size_t>(b) + 1;
      ASSERT_GE(touched, frame.size());
      ++frames;
      if (random() % 2) reader.release();
    }
    broken += reader.broken();
  }
  RecordProperty("frames", frames);
  RecordProperty("broken", broken);
  // The fuzzing reached both outcomes.
  EXPECT_GT(frames, 2000);
  EXPECT_GT(broken, 300);
}

// ---- a hostile consumer: the producer's checks -----------------------------------------

// Writes and takes frames of 100 bytes until the producer's head passes `passes` rings,
// then fills the ring: the next reserve must read tail again.
std::uint64_t cycle_then_fill(GuardedRing& ring, RingWriter& writer, RingReader& reader, int passes) {
  std::uint64_t sequence = 0;
  while (ring.control().head.load() < static_cast<std::uint64_t>(passes) * ring.capacity()) {
    EXPECT_TRUE(write_frame(writer, sequence, 100));
    EXPECT_TRUE(holds(reader.peek(), sequence, 100));
    reader.release();
    ++sequence;
  }
  while (write_frame(writer, sequence, 100)) ++sequence;
  EXPECT_FALSE(writer.broken());
  return ring.control().head.load();
}

TEST(ShmRing, ProducerRefusesAGarbageTail) {
  const std::uint64_t capacity = 4096;
  struct Case {
    const char* name;
    int passes;
    std::uint64_t (*tail)(std::uint64_t head);
  };
  const Case cases[] = {
      {"ahead of head", 0, [](std::uint64_t head) { return head + 8; }},
      {"far ahead of head", 3, [](std::uint64_t head) { return head + 64 * 4096; }},
      {"more than a ring behind", 3, [](std::uint64_t head) { return head - 4096 - 8; }},
      {"far behind", 5, [](std::uint64_t) { return std::uint64_t{0}; }},
      {"not a multiple of 8", 3, [](std::uint64_t head) { return head - 4096 + 4; }},
      {"all ones", 1, [](std::uint64_t) { return ~std::uint64_t{0}; }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    GuardedRing ring(capacity);
    RingWriter writer(ring.region(), capacity);
    RingReader reader(ring.region(), capacity);
    const std::uint64_t head = cycle_then_fill(ring, writer, reader, c.passes);
    ring.control().tail.store(c.tail(head));
    EXPECT_EQ(writer.reserve(100).data(), nullptr);
    EXPECT_TRUE(writer.broken());
    EXPECT_EQ(writer.reserve(0).data(), nullptr);
    EXPECT_FALSE(writer.write(std::vector<std::byte>(8)));
    // Put an honest tail back (everything taken): the producer stays broken.
    ring.control().tail.store(head);
    EXPECT_EQ(writer.reserve(8).data(), nullptr);
    EXPECT_TRUE(writer.broken());
    EXPECT_EQ(ring.control().head.load(), head);  // and published nothing more
  }
  {
    SCOPED_TRACE("an honest tail exactly one ring behind: full, not broken");
    GuardedRing ring(capacity);
    RingWriter writer(ring.region(), capacity);
    RingReader reader(ring.region(), capacity);
    const std::uint64_t head = cycle_then_fill(ring, writer, reader, 3);
    ring.control().tail.store(head - capacity);
    EXPECT_EQ(writer.reserve(100).data(), nullptr);
    EXPECT_FALSE(writer.broken());
  }
}

// ---- two processes -----------------------------------------------------------------------

TEST(ShmRing, AChildProcessWrites100000FramesInOrder) {
  constexpr std::uint64_t kFrames = 100000;
  constexpr std::size_t kCapacity = 64 * 1024;
  GuardedRing ring(kCapacity, /*shared=*/true);
  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(3);
    RingWriter writer(ring.region(), kCapacity);
    const auto deadline = Clock::now() + 20s;
    for (std::uint64_t sequence = 0; sequence < kFrames; ++sequence) {
      const std::size_t size = 8 + (sequence * 37) % 600;
      for (std::uint32_t tries = 1;; ++tries) {
        std::span<std::byte> space = writer.reserve(size);
        if (space.data() != nullptr) {
          std::memcpy(space.data(), &sequence, 8);
          fill(space.subspan(8), sequence);
          writer.commit(size);
          break;
        }
        if (writer.broken()) ::_exit(4);
        if ((tries & 0x3F) == 0) {
          ::sched_yield();
          if (Clock::now() > deadline || ::getppid() != parent) ::_exit(5);
        }
      }
    }
    ::_exit(0);
  }
  RingReader reader(ring.region(), kCapacity);
  const auto deadline = Clock::now() + 20s;
  std::uint64_t expected = 0;
  std::string failure;
  for (std::uint32_t tries = 1; expected < kFrames && failure.empty(); ++tries) {
    std::span<const std::byte> frame = reader.peek();
    if (frame.data() == nullptr) {
      if (reader.broken()) failure = std::string("broken: ") + reader.broken_why();
      if ((tries & 0x3F) == 0) {
        ::sched_yield();
        if (Clock::now() > deadline) failure = "timed out";
        int status = 0;
        if (!reader.has_frames() && ::waitpid(child, &status, WNOHANG) == child) {
          failure = "the writer ended early, status " + std::to_string(status);
        }
      }
      continue;
    }
    std::uint64_t sequence = 0;
    const std::size_t size = 8 + (expected * 37) % 600;
    if (!ring.inside(frame) || frame.size() != size) {
      failure = "frame " + std::to_string(expected) + " has " + std::to_string(frame.size()) + " bytes";
      break;
    }
    std::memcpy(&sequence, frame.data(), 8);
    if (sequence != expected || !holds(frame.subspan(8), sequence, size - 8)) {
      failure = "frame " + std::to_string(expected) + " arrived as " + std::to_string(sequence);
      break;
    }
    reader.release();
    ++expected;
  }
  if (!failure.empty()) ::kill(child, SIGKILL);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_EQ(failure, "");
  EXPECT_EQ(expected, kFrames);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
  EXPECT_EQ(reader.peek().data(), nullptr);
  EXPECT_FALSE(reader.broken());
}

// ---- inboxes -----------------------------------------------------------------------------

auth::Key key(std::uint8_t seed) {
  auth::Key key{};
  for (std::size_t i = 0; i < key.size(); ++i) key[i] = static_cast<std::uint8_t>(seed + 7 * i);
  return key;
}

constexpr InboxShape kShape{.job_id = 0x5eed1234, .owner = 3, .processes = 4, .capacity = 4096};

// The message of what open_peer threw ("" when it did not throw).
std::string open_error(int os_pid, int fd, const InboxShape& shape, const auth::Key& secret) {
  try {
    InboxMapping peer = InboxMapping::open_peer(os_pid, fd, shape, secret);
    return "";
  } catch (const std::runtime_error& error) {
    std::string what = error.what();
    return what.empty() ? "(an empty message)" : what;
  }
}

TEST(ShmInbox, OpenPeerOfOwnInboxSucceedsAndSharesItsMemory) {
  InboxMapping own = InboxMapping::create(kShape, key(1));
  ASSERT_GE(own.fd(), 0);
  InboxMapping peer = InboxMapping::open_peer(::getpid(), own.fd(), kShape, key(1));
  // The same memory: a frame written through the peer's mapping reads in the owner's.
  RingWriter writer(peer.ring_region(1), kShape.capacity);
  RingReader reader(own.ring_region(1), kShape.capacity);
  ASSERT_TRUE(write_frame(writer, 7, 40));
  EXPECT_TRUE(holds(reader.peek(), 7, 40));
  own.sleeping().store(1);
  EXPECT_EQ(peer.sleeping().load(), 1u);
  // Rings of different senders do not overlap.
  EXPECT_EQ(own.ring_region(2) - own.ring_region(1), static_cast<std::ptrdiff_t>(kRingControlBytes + kShape.capacity));
  EXPECT_EQ(inbox_bytes(kShape), 128 + 4 * (kRingControlBytes + kShape.capacity));
}

// memfd_create makes its files with mode 0777: the inbox and the staging area are made the
// owner's alone (the peers, the same user, open them through /proc).
TEST(ShmInbox, InboxAndStagingAreTheOwnersAlone) {
  InboxMapping inbox = InboxMapping::create(kShape, key(1));
  StagingMapping staging = StagingMapping::create(1 << 20);
  for (const auto& [name, fd] : {std::pair{"inbox", inbox.fd()}, std::pair{"staging", staging.fd()}}) {
    struct stat info {};
    ASSERT_EQ(::fstat(fd, &info), 0) << name;
    EXPECT_EQ(info.st_mode & 07777, 0600u) << name << " has mode 0" << std::oct << (info.st_mode & 07777);
  }
  StagingMapping peer = StagingMapping::open_peer(::getpid(), staging.fd(), 3, 1 << 20);
}

TEST(ShmInbox, OpenPeerRefusesAnotherJobOwnerShapeOrSecret) {
  InboxMapping own = InboxMapping::create(kShape, key(1));
  const int pid = ::getpid();
  InboxShape other_job = kShape;
  other_job.job_id ^= 1;
  InboxShape other_owner = kShape;
  other_owner.owner = 2;
  InboxShape other_capacity = kShape;
  other_capacity.capacity = 8192;
  // Another (processes, capacity) with the very same size: only the header can tell.
  InboxShape same_size = kShape;
  same_size.processes = 2;
  same_size.capacity = 2 * (kRingControlBytes + kShape.capacity) - kRingControlBytes;
  ASSERT_EQ(inbox_bytes(same_size), inbox_bytes(kShape));
  const std::pair<const char*, std::string> errors[] = {
      {"another job id", open_error(pid, own.fd(), other_job, key(1))},
      {"another owner", open_error(pid, own.fd(), other_owner, key(1))},
      {"another capacity", open_error(pid, own.fd(), other_capacity, key(1))},
      {"another shape of the same size", open_error(pid, own.fd(), same_size, key(1))},
      {"another secret", open_error(pid, own.fd(), kShape, key(2))},
  };
  for (const auto& [name, error] : errors) {
    SCOPED_TRACE(name);
    EXPECT_NE(error, "");
    EXPECT_NE(error.find("/proc/"), std::string::npos) << error;  // names what it opened
  }
  EXPECT_EQ(open_error(pid, own.fd(), kShape, key(1)), "");
}

TEST(ShmInbox, OpenPeerRefusesWhatIsNotAnInbox) {
  const int pid = ::getpid();
  const std::size_t size = inbox_bytes(kShape);
  {
    SCOPED_TRACE("a memory file of the right size without a header");
    const int fd = ::memfd_create("not-an-inbox", MFD_CLOEXEC);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(size)), 0);
    EXPECT_NE(open_error(pid, fd, kShape, key(1)), "");
    ::close(fd);
  }
  {
    SCOPED_TRACE("an inbox's header copied into a memory file of another size");
    InboxMapping own = InboxMapping::create(kShape, key(1));
    const int fd = ::memfd_create("short-inbox", MFD_CLOEXEC);
    ASSERT_GE(fd, 0);
    std::vector<char> header(128);
    ASSERT_EQ(::pread(own.fd(), header.data(), header.size(), 0), 128);
    ASSERT_EQ(::pwrite(fd, header.data(), header.size(), 0), 128);
    ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(size / 2)), 0);
    const std::string error = open_error(pid, fd, kShape, key(1));
    EXPECT_NE(error, "");
    EXPECT_NE(error.find("size"), std::string::npos) << error;
    ::close(fd);
  }
  {
    SCOPED_TRACE("the right header in a memory file of the right size, unsealed: a peer could shrink it");
    InboxMapping own = InboxMapping::create(kShape, key(1));
    const int fd = ::memfd_create("copied-inbox", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    ASSERT_GE(fd, 0);
    std::vector<char> header(128);
    ASSERT_EQ(::pread(own.fd(), header.data(), header.size(), 0), 128);
    ASSERT_EQ(::pwrite(fd, header.data(), header.size(), 0), 128);
    ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(size)), 0);
    const std::string error = open_error(pid, fd, kShape, key(1));
    EXPECT_NE(error.find("not sealed"), std::string::npos) << error;
    SCOPED_TRACE("the same with its size sealed is accepted (control)");
    ASSERT_EQ(::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL), 0);
    EXPECT_EQ(open_error(pid, fd, kShape, key(1)), "");
    ::close(fd);
  }
  {
    SCOPED_TRACE("a pipe");
    int fds[2];
    ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
    EXPECT_NE(open_error(pid, fds[0], kShape, key(1)), "");
    ::close(fds[0]);
    ::close(fds[1]);
  }
  {
    SCOPED_TRACE("/dev/zero");
    const int fd = ::open("/dev/zero", O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    EXPECT_NE(open_error(pid, fd, kShape, key(1)), "");
    ::close(fd);
  }
  {
    SCOPED_TRACE("a descriptor that is not open");
    EXPECT_NE(open_error(pid, 1000000, kShape, key(1)), "");
  }
}

}  // namespace
}  // namespace bsp::transport::shm
