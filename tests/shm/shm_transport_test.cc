// tests/shm/shm_transport_test.cc: the shm transport on its own. Two transports of one
// fake job live in this process (pids 0 and 1; each maps the other's inbox through
// /proc/self/fd). Frames go both ways in order; bytes a hostile peer writes into shared
// memory (ring positions, lengths) make the victim report that peer lost, never read or
// write outside its rings; addresses of another job, another host or garbage are refused.
#include <fcntl.h>
#include <poll.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "auth/mac.h"
#include "transport/registry.h"
#include "transport/shm/cross_memory.h"
#include "transport/shm/huge_page_sources.h"
#include "transport/shm/shm_ring.h"
#include "transport/shm/shm_transport.h"
#include "transport/transport.h"

namespace {

using bsp::transport::TransportConfig;

struct Collected : bsp::transport::FrameSink {
  std::vector<std::pair<int, std::string>> frames;
  std::vector<std::pair<int, std::string>> lost;
  void on_frame(int peer, std::span<const std::byte> frame) override {
    frames.emplace_back(peer, std::string(reinterpret_cast<const char*>(frame.data()), frame.size()));
  }
  void on_peer_lost(int peer, std::string_view why) override { lost.emplace_back(peer, std::string(why)); }
};

TransportConfig config_of(int pid, std::uint32_t job = 7, std::uint8_t key_byte = 1, std::size_t ring = 65536) {
  TransportConfig config;
  config.pid = pid;
  config.nprocs = 2;
  config.job_id = job;
  config.secret.fill(key_byte);
  config.options["shm_ring"] = std::to_string(ring);
  return config;
}

std::span<const std::byte> bytes_of(const std::string& text) {
  return std::as_bytes(std::span(text.data(), text.size()));
}

// The two ends of a job, connected.
struct Pair {
  std::unique_ptr<bsp::transport::Transport> a = bsp::transport::make_shm_transport(config_of(0));
  std::unique_ptr<bsp::transport::Transport> b = bsp::transport::make_shm_transport(config_of(1));
  Pair() {
    std::vector<std::string> addresses = {a->local_address(), b->local_address()};
    a->connect(addresses);
    b->connect(addresses);
  }
};

// Maps the inbox named in an shm address (fd field) for scribbling, as a hostile peer would.
struct Scribbler {
  std::byte* base = nullptr;
  std::size_t size = 0;
  explicit Scribbler(const std::string& address) {
    // shm:<host>:<os pid>:<inbox fd>:<wake fd>:<capacity>
    std::vector<std::string> fields;
    std::size_t from = 4;
    for (std::size_t colon; (colon = address.find(':', from)) != std::string::npos; from = colon + 1) {
      fields.push_back(address.substr(from, colon - from));
    }
    fields.push_back(address.substr(from));
    int fd = std::stoi(fields[2]);
    size = static_cast<std::size_t>(::lseek(fd, 0, SEEK_END));
    base = static_cast<std::byte*>(::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
  }
  ~Scribbler() { ::munmap(base, size); }
  // The ring region of `sender` in this inbox (128-byte header, then per sender the ring's
  // control lines and its capacity).
  std::byte* ring(int sender, std::size_t capacity) {
    return base + 128 + sender * (bsp::transport::shm::kRingControlBytes + capacity);
  }
};

TEST(ShmTransport, FramesGoBothWaysInOrder) {
  Pair pair;
  EXPECT_TRUE(pair.a->capabilities().reliable);
  EXPECT_TRUE(pair.a->capabilities().intact);
  for (int i = 0; i < 1000; ++i) {
    std::string text = "frame " + std::to_string(i) + std::string(static_cast<std::size_t>(i % 300), 'x');
    ASSERT_EQ(pair.a->send(1, bytes_of(text)), bsp::transport::SendStatus::sent);
    Collected got;
    ASSERT_TRUE(pair.b->ready());
    ASSERT_EQ(pair.b->receive(got, 64), 1u);
    ASSERT_EQ(got.frames.at(0), std::make_pair(0, text));
    ASSERT_EQ(pair.b->send(0, bytes_of(text)), bsp::transport::SendStatus::sent);
    Collected back;
    ASSERT_EQ(pair.a->receive(back, 64), 1u);
    ASSERT_EQ(back.frames.at(0).second, text);
  }
  EXPECT_FALSE(pair.a->ready());
}

// Pulled transfers: what a process stages its peer reads by token; a token or size beyond
// the staging memory (a hostile record) gives nothing; a half is reused two supersteps on.
TEST(ShmTransport, StagedBytesArePulledByTokenAndCheckedAgainstTheArea) {
  Pair pair;
  std::uint64_t token = 0;
  std::byte* staged = pair.a->staging()->stage(1, 5, token);
  ASSERT_NE(staged, nullptr);
  std::memcpy(staged, "hello", 5);
  std::span<const std::byte> seen = pair.b->staging()->staged(0, token, 5);
  ASSERT_EQ(seen.size(), 5u);
  EXPECT_EQ(std::memcmp(seen.data(), "hello", 5), 0);
  EXPECT_TRUE(pair.b->staging()->staged(0, std::uint64_t{1} << 40, 5).empty());
  EXPECT_TRUE(pair.b->staging()->staged(0, token, std::size_t{1} << 40).empty());
  EXPECT_TRUE(pair.b->staging()->staged(0, ~std::uint64_t{0} - 2, 5).empty());   // token + size overflows
  EXPECT_TRUE(pair.b->staging()->staged(7, token, 5).empty());                   // no such peer
  EXPECT_EQ(pair.a->staging()->stage(1, std::size_t{1} << 40, token), nullptr);  // too big: push it instead
  std::uint64_t second = 0;
  ASSERT_NE(pair.a->staging()->stage(1, 5, second), nullptr);
  EXPECT_NE(second, token);  // one superstep's stagings do not overlap
  pair.a->staging()->next_superstep();
  std::uint64_t other_half = 0;
  ASSERT_NE(pair.a->staging()->stage(1, 5, other_half), nullptr);
  EXPECT_NE(other_half, token);
  pair.a->staging()->next_superstep();  // two supersteps on: the first half again, from its start
  std::uint64_t again = 0;
  ASSERT_NE(pair.a->staging()->stage(1, 5, again), nullptr);
  EXPECT_EQ(again, token);
}

TEST(ShmTransport, AFullRingSaysBusyUntilTheReceiverTakes) {
  Pair pair;
  std::string big(8000, 'z');
  int sent = 0;
  while (pair.a->send(1, bytes_of(big)) == bsp::transport::SendStatus::sent) ASSERT_LT(++sent, 100);
  EXPECT_GE(sent, 7);  // 64 KiB ring
  Collected got;
  EXPECT_EQ(pair.b->receive(got, 1000), static_cast<std::size_t>(sent));
  EXPECT_EQ(pair.a->send(1, bytes_of(big)), bsp::transport::SendStatus::sent);
}

// A sender that found the ring full and went to sleep is woken when the receiver makes
// room (it used to sleep out its whole wait slice, 20 ms per ring-full of data).
TEST(ShmTransport, ASenderWaitingForRoomIsWokenWhenTheReceiverTakes) {
  Pair pair;
  std::string big(8000, 'w');
  while (pair.a->send(1, bytes_of(big)) == bsp::transport::SendStatus::sent) {
  }
  EXPECT_FALSE(pair.a->ready());        // nothing for it, no room yet
  ASSERT_TRUE(pair.a->before_block());  // so it sleeps
  pollfd waiter{pair.a->wait_fd(), POLLIN, 0};
  EXPECT_EQ(::poll(&waiter, 1, 0), 0);
  Collected got;
  EXPECT_GT(pair.b->receive(got, 1000), 0u);
  EXPECT_EQ(::poll(&waiter, 1, 1000), 1);  // the receiver wrote the sender's pipe
  pair.a->after_block();
  EXPECT_EQ(pair.a->send(1, bytes_of(big)), bsp::transport::SendStatus::sent);
  // Spinning sees the room too, without the pipe.
  while (pair.a->send(1, bytes_of(big)) == bsp::transport::SendStatus::sent) {
  }
  EXPECT_FALSE(pair.a->ready());
  pair.b->receive(got, 1000);
  EXPECT_TRUE(pair.a->ready());
}

TEST(ShmTransport, SleepingReceiverIsWokenThroughItsPipe) {
  Pair pair;
  ASSERT_TRUE(pair.b->before_block());  // nothing there: b may sleep, and says so
  pair.a->send(1, bytes_of("wake up"));
  pollfd waiter{pair.b->wait_fd(), POLLIN, 0};
  EXPECT_EQ(::poll(&waiter, 1, 1000), 1);  // the sender saw the flag and wrote the pipe
  pair.b->after_block();
  Collected got;
  EXPECT_EQ(pair.b->receive(got, 8), 1u);
  // Not sleeping: a send writes nothing to the pipe.
  pair.a->send(1, bytes_of("again"));
  EXPECT_EQ(::poll(&waiter, 1, 0), 0);
  // Frames already there: before_block refuses to sleep.
  EXPECT_FALSE(pair.b->before_block());
}

// Superstep lines: a small superstep's records in one cache line, taken only for the
// superstep asked for; a line wakes a sleeping receiver; ready() reports only the line the
// receiver looked for (one of a later superstep must not keep it from blocking).
TEST(ShmTransport, SuperstepLineCarriesRecordsForTheSuperstepAskedFor) {
  Pair pair;
  bsp::transport::Staging* a = pair.a->staging();
  bsp::transport::Staging* b = pair.b->staging();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  std::byte into[bsp::transport::Staging::kSuperstepLineBytes];
  EXPECT_EQ(b->take_superstep_line(0, 0, into), -1);
  EXPECT_FALSE(pair.b->ready());
  ASSERT_TRUE(pair.b->before_block());
  ASSERT_TRUE(a->post_superstep_line(1, 0, bytes_of("hello")));
  pollfd waiter{pair.b->wait_fd(), POLLIN, 0};
  EXPECT_EQ(::poll(&waiter, 1, 1000), 1);  // the poster saw the flag and wrote the pipe
  pair.b->after_block();
  EXPECT_TRUE(pair.b->ready());
  ASSERT_EQ(b->take_superstep_line(0, 0, into), 5);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(into), 5), "hello");
  EXPECT_FALSE(pair.b->ready());
  // Too large for a line: refused (the caller sends frames).
  EXPECT_FALSE(a->post_superstep_line(1, 1, bytes_of(std::string(53, 'x'))));
  // b looks for superstep 1; a posts 2 first (a peer ahead): not ready, not taken as 1.
  EXPECT_EQ(b->take_superstep_line(0, 1, into), -1);
  ASSERT_TRUE(a->post_superstep_line(1, 2, bytes_of("two")));
  EXPECT_FALSE(pair.b->ready());
  EXPECT_EQ(b->take_superstep_line(0, 1, into), -1);
  ASSERT_TRUE(a->post_superstep_line(1, 1, {}));  // an empty superstep: no records
  EXPECT_TRUE(pair.b->ready());
  EXPECT_EQ(b->take_superstep_line(0, 1, into), 0);
  ASSERT_EQ(b->take_superstep_line(0, 2, into), 3);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(into), 3), "two");
  Collected got;
  pair.b->receive(got, 8);
  EXPECT_TRUE(got.frames.empty());
  EXPECT_TRUE(got.lost.empty());
}

TEST(ShmTransport, GarbageSuperstepLineSizeIsAReportedLossNotACrash) {
  Pair pair;
  Scribbler inbox_of_b(pair.b->local_address());
  auto* control = reinterpret_cast<bsp::transport::shm::RingControl*>(inbox_of_b.ring(0, 65536));
  control->lines[0].size.store(1u << 20);  // pid 0 (hostile) claims a line this long
  control->lines[0].mark.store(1);
  std::byte into[bsp::transport::Staging::kSuperstepLineBytes];
  EXPECT_EQ(pair.b->staging()->take_superstep_line(0, 0, into), -1);
  Collected got;
  pair.b->receive(got, 64);
  ASSERT_EQ(got.lost.size(), 1u);
  EXPECT_EQ(got.lost[0].first, 0);
  EXPECT_NE(got.lost[0].second.find("superstep line"), std::string::npos) << got.lost[0].second;
}

TEST(ShmTransport, GarbageRingPositionFromAPeerIsAReportedLossNotACrash) {
  for (std::uint64_t garbage : {std::uint64_t{1} << 40, std::uint64_t{12345}, std::uint64_t{3}}) {
    Pair pair;
    pair.a->send(1, bytes_of("honest"));
    Scribbler inbox_of_b(pair.b->local_address());
    auto* control = reinterpret_cast<bsp::transport::shm::RingControl*>(inbox_of_b.ring(0, 65536));
    control->head.store(garbage);  // pid 0 (hostile) claims to have written this much
    Collected got;
    pair.b->receive(got, 64);
    ASSERT_EQ(got.lost.size(), 1u) << garbage;
    EXPECT_EQ(got.lost[0].first, 0);
    EXPECT_NE(got.lost[0].second.find("shared memory with it is broken"), std::string::npos) << got.lost[0].second;
    Collected again;
    pair.b->receive(again, 64);  // reported once
    EXPECT_TRUE(again.lost.empty());
  }
}

TEST(ShmTransport, GarbageFrameLengthIsRefused) {
  Pair pair;
  pair.a->send(1, bytes_of("honest frame"));
  Scribbler inbox_of_b(pair.b->local_address());
  std::byte* data = inbox_of_b.ring(0, 65536) + bsp::transport::shm::kRingControlBytes;
  const std::uint32_t huge = 0x7FFFFFF0;
  std::memcpy(data, &huge, 4);
  Collected got;
  pair.b->receive(got, 64);
  EXPECT_TRUE(got.frames.empty());
  ASSERT_EQ(got.lost.size(), 1u);
  EXPECT_NE(got.lost[0].second.find("length"), std::string::npos) << got.lost[0].second;
}

TEST(ShmTransport, GarbageConsumerPositionStopsTheSender) {
  Pair pair;
  Scribbler inbox_of_b(pair.b->local_address());
  auto* control = reinterpret_cast<bsp::transport::shm::RingControl*>(inbox_of_b.ring(0, 65536));
  std::string big(8000, 'q');
  while (pair.a->send(1, bytes_of(big)) == bsp::transport::SendStatus::sent) {
  }
  control->tail.store(std::uint64_t{1} << 50);  // b (hostile) claims to have read what was never written
  EXPECT_EQ(pair.a->send(1, bytes_of(big)), bsp::transport::SendStatus::sent);  // dropped: the job stops
  Collected got;
  pair.a->receive(got, 8);
  ASSERT_EQ(got.lost.size(), 1u);
  EXPECT_EQ(got.lost[0].first, 1);
}

TEST(ShmTransport, AnotherJobsOrAnotherHostsInboxIsRefused) {
  auto a = bsp::transport::make_shm_transport(config_of(0));
  auto other_job = bsp::transport::make_shm_transport(config_of(1, 8));
  auto other_secret = bsp::transport::make_shm_transport(config_of(1, 7, 2));
  auto other_ring = bsp::transport::make_shm_transport(config_of(1, 7, 1, 131072));
  for (auto* peer : {other_job.get(), other_secret.get()}) {
    try {
      a->connect({a->local_address(), peer->local_address()});
      FAIL() << "connected to an inbox of another job";
    } catch (const std::runtime_error& error) {
      EXPECT_NE(std::string(error.what()).find("is not pid 1's inbox of this job"), std::string::npos) << error.what();
    }
  }
  EXPECT_THROW(a->connect({a->local_address(), other_ring->local_address()}), std::runtime_error);
  std::string address = other_job->local_address();
  std::string elsewhere = "shm:0123456789abcdef" + address.substr(address.find(':', 4));
  try {
    a->connect({a->local_address(), elsewhere});
    FAIL() << "connected to a process of another host";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("use --transport=shm+tcp"), std::string::npos) << error.what();
  }
  EXPECT_FALSE(a->reaches(elsewhere));
  EXPECT_TRUE(a->reaches(address));
  for (const std::string& garbage : {std::string("shm:"), std::string("shm:x:1:2"), std::string("tcp:1.2.3.4:5"),
                                     std::string("shm:h:-1:3:4:65536"), std::string("shm:h:1:3:4:65537")}) {
    EXPECT_THROW(a->connect({a->local_address(), garbage}), std::runtime_error) << garbage;
    EXPECT_FALSE(a->reaches(garbage)) << garbage;
  }
}

TEST(ShmTransport, HybridNamesAreBuiltAndBadOnesRefused) {
  TransportConfig config = config_of(0);
  for (const char* bad : {"shm+shm", "udp+shm", "shm+", "shm+bogus", "shm+udp+nic"}) {
    EXPECT_THROW(bsp::transport::create_transport(bad, config), std::runtime_error) << bad;
  }
}

}  // namespace

namespace {

// Single copies (staging.h): after connect each side has probed that it may read the
// other's memory (here: this very process), a peer's range is copied exactly, read marks
// travel, and addresses a hostile peer could name (null, wrapping, past user space,
// unmapped) are refused with a reason, nothing written where they point.
TEST(ShmSingleCopy, ReadsAPeersMemoryAndRefusesHostileAddresses) {
  Pair pair;
  bsp::transport::Staging* a = pair.a->staging();
  bsp::transport::Staging* b = pair.b->staging();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(a->single_copy_refusal(1), "");
  std::vector<unsigned char> source(300000);
  for (std::size_t i = 0; i < source.size(); ++i) source[i] = static_cast<unsigned char>(i * 7 + 3);
  // The default asks for huge pages, which a std::vector's memory need not be; "small" first.
  EXPECT_EQ(a->single_copy_to(1, source.data(), 100), "small");
  std::string_view verdict = a->single_copy_to(1, source.data(), source.size());
  EXPECT_TRUE(verdict.empty() || verdict == "4k-pages") << verdict;

  std::vector<unsigned char> into(source.size() + 2, 0xab);
  const auto address = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(source.data()));
  EXPECT_EQ(b->read_peer(0, address + 5, reinterpret_cast<std::byte*>(into.data() + 1), source.size() - 5), "");
  EXPECT_EQ(into[0], 0xab);
  EXPECT_EQ(into[source.size() - 4], 0xab);
  EXPECT_EQ(std::memcmp(into.data() + 1, source.data() + 5, source.size() - 5), 0);

  std::byte landing[64];
  std::memset(landing, 0x5a, sizeof landing);
  for (std::uint64_t hostile : {std::uint64_t{0}, ~std::uint64_t{0} - 10, std::uint64_t{1} << 60}) {
    std::string why = b->read_peer(0, hostile, landing, sizeof landing);
    EXPECT_NE(why.find("no user address"), std::string::npos) << hostile << ": " << why;
  }
  // A page this process does not map: the kernel refuses.
  void* hole = ::mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(hole, MAP_FAILED);
  ::munmap(hole, 4096);
  std::string why = b->read_peer(0, reinterpret_cast<std::uintptr_t>(hole), landing, sizeof landing);
  EXPECT_NE(why.find("process_vm_readv"), std::string::npos) << why;
  for (std::byte byte : landing) EXPECT_EQ(byte, std::byte{0x5a});
  EXPECT_NE(b->read_peer(5, address, landing, 1), "");  // no such peer

  EXPECT_EQ(b->read_mark(0), 0u);
  a->publish_read_mark(41);
  EXPECT_EQ(b->read_mark(0), 41u);
}

TEST(ShmSingleCopy, OffByOptionMeansStaging) {
  TransportConfig first = config_of(0), second = config_of(1);
  first.options["shm_single_copy"] = "off";
  second.options["shm_single_copy"] = "off";
  auto a = bsp::transport::make_shm_transport(first);
  auto b = bsp::transport::make_shm_transport(second);
  std::vector<std::string> addresses = {a->local_address(), b->local_address()};
  a->connect(addresses);
  b->connect(addresses);
  std::vector<unsigned char> source(1 << 20);
  EXPECT_EQ(a->staging()->single_copy_to(1, source.data(), source.size()), "off");
  // Nobody probed: a peer that does not turn it off still may not read the other.
  TransportConfig third = config_of(1);
  third.options["shm_single_copy"] = "any";
  auto c = bsp::transport::make_shm_transport(first);
  auto d = bsp::transport::make_shm_transport(third);
  addresses = {c->local_address(), d->local_address()};
  c->connect(addresses);
  d->connect(addresses);
  EXPECT_EQ(d->staging()->single_copy_to(0, source.data(), source.size()), "not-probed");
  EXPECT_EQ(c->staging()->single_copy_to(1, source.data(), source.size()), "off");
}

}  // namespace

namespace {

// A probe the kernel refuses (here: the peer names memory it does not map, as a process of
// another user or under yama would be refused) leaves that pair on staging: the prober
// says why, and the peer, seeing the verdict, offers no single copy ("refused").
TEST(ShmSingleCopy, RefusedProbeMeansStagingAndSaysWhy) {
  TransportConfig first = config_of(0), second = config_of(1);
  first.options["shm_single_copy"] = "any";
  second.options["shm_single_copy"] = "any";
  auto a = bsp::transport::make_shm_transport(first);
  auto b = bsp::transport::make_shm_transport(second);
  std::string b_address = b->local_address();
  std::string misleading = b_address.substr(0, b_address.rfind(':') + 1) + "1000";  // page 1: never mapped
  a->connect({a->local_address(), misleading});
  b->connect({a->local_address(), b_address});
  EXPECT_NE(a->staging()->single_copy_refusal(1).find("process_vm_readv"), std::string::npos)
      << a->staging()->single_copy_refusal(1);
  std::vector<unsigned char> source(1 << 20);
  EXPECT_EQ(b->staging()->single_copy_to(0, source.data(), source.size()), "refused");
  EXPECT_EQ(a->staging()->single_copy_to(1, source.data(), source.size()), "");  // b could read a
}

// Sources moved onto huge pages (huge_page_sources.h): a range on 4 KiB pages is left
// alone the first time it is offered, collapsed (contents kept) the second, and then lies
// on huge pages; a range whose whole huge pages would not carry most of it, a range the
// kernel refuses (MADV_NOHUGEPAGE), and everything with collapsing off stay two copies.
TEST(ShmSingleCopy, SourcesOfferedAgainMoveOntoHugePages) {
  using bsp::transport::shm::HugePageSources;
  const std::size_t align = 2u << 20, bytes = 4u << 20;
  auto buffer = [&](bool no_huge) {
    void* base = ::mmap(nullptr, bytes + align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    EXPECT_NE(base, MAP_FAILED);
    ::madvise(base, bytes + align, no_huge ? MADV_NOHUGEPAGE : MADV_NORMAL);
    auto* start = reinterpret_cast<unsigned char*>((reinterpret_cast<std::uintptr_t>(base) + align - 1) & ~(align - 1));
    for (std::size_t i = 0; i < bytes; ++i) start[i] = static_cast<unsigned char>(i * 11 + (i >> 12));
    return start;
  };
  unsigned char* plain = buffer(false);
  if (bsp::transport::shm::huge_page_bytes(plain, bytes) != 0)
    GTEST_SKIP() << "this kernel put the buffer on huge pages";
  HugePageSources off(false);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(off.prepare(plain, bytes), "4k-pages");
  HugePageSources sources(true);
  // 2.5 MiB from 1 MiB into a huge page: no whole huge page inside.
  for (int i = 0; i < 3; ++i) EXPECT_EQ(sources.prepare(plain + (1u << 20), 5u << 19), "4k-pages");
  EXPECT_EQ(bsp::transport::shm::huge_page_bytes(plain, bytes), 0u);
  EXPECT_EQ(sources.prepare(plain, bytes), "4k-pages");
  std::string_view second = sources.prepare(plain, bytes);
  if (second == "not-collapsed") GTEST_SKIP() << "the kernel does not collapse here: " << sources.last_refusal();
  EXPECT_EQ(second, "");
  EXPECT_EQ(sources.collapses(), 1u);
  EXPECT_EQ(bsp::transport::shm::huge_page_bytes(plain, bytes), bytes);
  for (std::size_t i = 0; i < bytes; ++i) {
    ASSERT_EQ(plain[i], static_cast<unsigned char>(i * 11 + (i >> 12))) << i;
  }
  EXPECT_EQ(sources.prepare(plain, bytes), "");
  EXPECT_EQ(sources.collapses(), 1u);

  unsigned char* refused = buffer(true);
  EXPECT_EQ(sources.prepare(refused, bytes), "4k-pages");
  EXPECT_EQ(sources.prepare(refused, bytes), "not-collapsed");
  EXPECT_EQ(sources.prepare(refused, bytes), "not-collapsed");  // asked once only
  EXPECT_NE(sources.last_refusal().find("MADV_COLLAPSE"), std::string::npos) << sources.last_refusal();
  EXPECT_EQ(sources.collapses(), 1u);
}

}  // namespace
