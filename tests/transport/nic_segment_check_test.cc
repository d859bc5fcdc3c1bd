// tests/transport/nic_segment_check_test.cc: the nic transport's published address
// (INTERFACE/MAC/HOST) and probe frames read as hostile input, the check by address alone,
// and the live probe exchange of transport/nic/segment_check.h among threads of this
// process on lo (that part needs CAP_NET_RAW: skipped with the reason otherwise).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "auth/mac.h"
#include "transport/nic/nic_address.h"
#include "transport/nic/segment_check.h"
#include "tests/transport/packet_socket_access.h"

namespace bsp::transport::nic {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

const MacAddress kMacA{0x52, 0x54, 0x00, 0x12, 0x34, 0x56};
const MacAddress kMacB{0x52, 0x54, 0x00, 0xab, 0xcd, 0xef};
const MacAddress kZero{};

auth::Key key(std::uint8_t seed) {
  auth::Key key{};
  for (std::size_t i = 0; i < key.size(); ++i) key[i] = static_cast<std::uint8_t>(seed + 7 * i);
  return key;
}

std::string refusal(const std::string& text, int pid = 5) {
  try {
    parse_address(text, pid);
  } catch (const std::runtime_error& error) {
    return error.what();
  }
  return "";
}

// ---- the published address ----

TEST(NicAddressTest, ReadsInterfaceMacAndHost) {
  NicAddress address = parse_address("eth0/52:54:00:12:34:56/node-7.cluster", 0);
  EXPECT_EQ(address.interface, "eth0");
  EXPECT_EQ(address.mac, kMacA);
  EXPECT_EQ(address.host, "node-7.cluster");
  EXPECT_EQ(parse_address("eth0/52:54:00:AB:CD:EF/h", 0).mac, kMacB);
  EXPECT_EQ(parse_address(format_address(address), 0).host, address.host);
}

TEST(NicAddressTest, AcceptsTheOlderFormWithoutHost) {
  NicAddress address = parse_address("lo/00:00:00:00:00:00", 1);
  EXPECT_EQ(address.interface, "lo");
  EXPECT_EQ(address.mac, kZero);
  EXPECT_TRUE(address.host.empty());
  EXPECT_TRUE(address.host_local());
}

TEST(NicAddressTest, PublishesThisHostsName) {
  std::string host = this_host_name();
  ASSERT_FALSE(host.empty());
  EXPECT_EQ(parse_address(format_address({"lo", kZero, host}), 0).host, host);
}

TEST(NicAddressTest, RefusesMalformedAddressesNamingThePid) {
  const std::vector<std::string> malformed = {
      "",
      "eth0",
      "/52:54:00:12:34:56/h",                             // no interface
      "eth0/",                                            // no MAC
      "eth0/52:54:00:12:34/h",                            // five bytes
      "eth0/52:54:00:12:34:56:78/h",                      // seven
      "eth0/52:54:00:12:34:5g/h",                         // not hex
      "eth0/52-54-00-12-34-56/h",                         // wrong separator
      "eth0/ 52:54:00:12:34:56/h",                        // padding
      "eth0/152:54:00:12:34:56/h",                        // a field too long
      "eth0/52:54:00:12:34:56/",                          // empty host
      "eth0/52:54:00:12:34:56/a host",                    // space in the host
      std::string("eth0/52:54:00:12:34:56/h\0st", 28),    // NUL in the host
      "eth0/52:54:00:12:34:56/" + std::string(300, 'h'),  // host too long
      "a-very-long-ifname/52:54:00:12:34:56/h",           // interface longer than IFNAMSIZ
      "et h0/52:54:00:12:34:56/h",                        // space in the interface
      "eth0:1/52:54:00:12:34:56/h",                       // ':' is no interface name's
      "../52:54:00:12:34:56/h",
  };
  for (const std::string& text : malformed) {
    std::string why = refusal(text);
    EXPECT_NE(why.find("pid 5 published the address"), std::string::npos) << "accepted: " << text << " -> " << why;
  }
}

TEST(NicAddressTest, QuotesHostileTextBoundedAndPrintable) {
  std::string hostile = "eth0/\x01\x02\x1b[31m" + std::string(1 << 20, 'x');
  std::string why = refusal(hostile);
  ASSERT_FALSE(why.empty());
  EXPECT_LT(why.size(), 400u) << why;
  EXPECT_NE(why.find("\\x1b"), std::string::npos) << why;
  for (char c : why) EXPECT_TRUE(c >= ' ' && c < 0x7f) << "unprintable byte in: " << why;
}

// ---- the check by address alone ----

TEST(StaticReachabilityTest, LoopbackOnOneHostPasses) {
  std::vector<NicAddress> addresses(4, NicAddress{"lo", kZero, "alpha"});
  for (int pid = 0; pid < 4; ++pid) EXPECT_EQ(static_reachability_error(addresses, pid), "");
}

TEST(StaticReachabilityTest, EthernetOnSeveralHostsIsLeftToTheProbes) {
  std::vector<NicAddress> addresses = {{"eth0", kMacA, "alpha"}, {"eth1", kMacB, "beta"}};
  EXPECT_EQ(static_reachability_error(addresses, 0), "");
  EXPECT_EQ(static_reachability_error(addresses, 1), "");
}

TEST(StaticReachabilityTest, LoopbackCannotReachAnotherHost) {
  std::vector<NicAddress> addresses = {{"lo", kZero, "alpha"}, {"lo", kZero, "beta"}};
  for (int pid = 0; pid < 2; ++pid) {
    std::string error = static_reachability_error(addresses, pid);
    EXPECT_NE(error.find("pid 0 (host alpha, lo"), std::string::npos) << error;
    EXPECT_NE(error.find("pid 1 (host beta, lo"), std::string::npos) << error;
    EXPECT_NE(error.find("--iface=NAME"), std::string::npos) << error;
    EXPECT_NE(error.find("--transport=udp"), std::string::npos) << error;
  }
}

TEST(StaticReachabilityTest, InterfaceWithoutMacCannotReachOneWithMac) {
  // One host, but pid 1's frames go out of eth0 while pid 0 listens on lo; both ends refuse.
  std::vector<NicAddress> addresses = {{"lo", kZero, "alpha"}, {"eth0", kMacA, "alpha"}};
  for (int pid = 0; pid < 2; ++pid) {
    std::string error = static_reachability_error(addresses, pid);
    EXPECT_NE(error.find("pid 0 (host alpha, lo 00:00:00:00:00:00)"), std::string::npos) << error;
    EXPECT_NE(error.find("pid 1 (host alpha, eth0 52:54:00:12:34:56)"), std::string::npos) << error;
  }
}

TEST(StaticReachabilityTest, PeersOfOlderBuildsWithoutHostAreJudgedByMac) {
  std::vector<NicAddress> addresses = {{"lo", kZero, "alpha"}, {"lo", kZero, ""}};
  EXPECT_EQ(static_reachability_error(addresses, 0), "");
  addresses[1] = {"eth0", kMacA, ""};
  EXPECT_NE(static_reachability_error(addresses, 0), "");
}

TEST(StaticReachabilityTest, ManyUnreachablePeersMakeABoundedMessage) {
  std::vector<NicAddress> addresses(1000, NicAddress{"eth0", kMacA, "beta"});
  addresses[0] = {"lo", kZero, "alpha"};
  std::string error = static_reachability_error(addresses, 0);
  EXPECT_LT(error.size(), 1000u) << error;
  EXPECT_NE(error.find("..."), std::string::npos) << error;
}

// ---- probe frames ----

struct ProbeFixture : ::testing::Test {
  const std::uint32_t job = 0x5eed0001;
  const auth::Key secret = key(3);
  const std::vector<NicAddress> addresses = {{"eth0", kMacA, "a"}, {"eth0", kMacB, "b"}, {"eth0", kMacA, "c"}};
  // A probe from `from` covering every pid: it heard pids 0 and 2, pid 1 reported.
  Probe probe_from(std::uint32_t from, std::uint32_t to = 1, bool passed = false) const {
    Probe probe;
    probe.job_id = job;
    probe.from = from;
    probe.to = to;
    probe.passed = passed;
    probe.first = 0;
    probe.count = 3;
    probe.heard_bits = {0b101};
    probe.reported_bits = {0b010};
    return probe;
  }
  std::vector<std::byte> frame_of(const Probe& probe) const {
    const MacAddress broadcast{0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    return encode_probe(probe, probe.to == kEveryone ? broadcast : addresses[probe.to % addresses.size()].mac,
                        addresses[probe.from % addresses.size()].mac, secret);
  }
  std::vector<std::byte> frame_from(std::uint32_t from, std::uint32_t to = 1, bool passed = false) const {
    return frame_of(probe_from(from, to, passed));
  }
  std::optional<Probe> decode(std::span<const std::byte> frame, int to = 1) const {
    return decode_probe(frame, job, to, addresses, secret);
  }
};

TEST_F(ProbeFixture, RoundTrips) {
  std::vector<std::byte> frame = frame_from(0, 1, true);
  EXPECT_EQ(frame.size(), 60u);  // padded to Ethernet's minimum
  std::optional<Probe> probe = decode(frame);
  ASSERT_TRUE(probe);
  EXPECT_EQ(probe->job_id, job);
  EXPECT_EQ(probe->from, 0u);
  EXPECT_EQ(probe->to, 1u);
  EXPECT_TRUE(probe->passed);
  EXPECT_EQ(probe->first, 0u);
  EXPECT_EQ(probe->count, 3u);
  EXPECT_TRUE(probe->heard(0));
  EXPECT_FALSE(probe->heard(1));
  EXPECT_TRUE(probe->heard(2));
  EXPECT_TRUE(probe->reported(1));
  EXPECT_FALSE(probe->reported(2));
  EXPECT_FALSE(probe->heard(3));  // outside the range
  EXPECT_EQ(std::to_integer<int>(frame[12]), 0x88);
  EXPECT_EQ(std::to_integer<int>(frame[13]), 0xB6);
}

TEST_F(ProbeFixture, BroadcastsReachEveryPidAndGoToTheBroadcastAddress) {
  std::vector<std::byte> frame = frame_from(0, kEveryone);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(std::to_integer<int>(frame[i]), 0xff);
  EXPECT_TRUE(decode(frame, 1));
  EXPECT_TRUE(decode(frame, 2));
  EXPECT_FALSE(decode(frame, 0));  // not from oneself
}

TEST_F(ProbeFixture, BitsBeyondTheCountAreIgnored) {
  Probe probe = probe_from(0);
  probe.heard_bits = {0xFF};
  probe.reported_bits = {0xFF};
  std::optional<Probe> decoded = decode(frame_of(probe));
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->heard_bits[0], 0b111);
  EXPECT_EQ(decoded->reported_bits[0], 0b111);
}

TEST_F(ProbeFixture, RefusesEveryHostileVariant) {
  std::vector<std::byte> good = frame_from(0, 1);
  const std::size_t used = 14 + 23 + 2 + 8;  // header, fields, two 1-byte bitmaps, MAC
  // Truncated anywhere.
  for (std::size_t size = 0; size < used; ++size) EXPECT_FALSE(decode(std::span(good.data(), size))) << size;
  // Not addressed to this pid, another job, a secret not the job's.
  EXPECT_FALSE(decode(good, 2));
  EXPECT_FALSE(decode(good, -1));
  EXPECT_FALSE(decode_probe(good, job + 1, 1, addresses, secret));
  EXPECT_FALSE(decode_probe(good, job, 1, addresses, key(4)));
  // From a pid outside the job, or from itself.
  EXPECT_FALSE(decode(frame_from(3, 1)));
  EXPECT_FALSE(decode(frame_from(0xFFFFFFFF, 1)));
  EXPECT_FALSE(decode(frame_from(1, 1)));
  // Bitmaps outside the job, empty, or longer than a probe carries.
  for (auto [first, count] : std::vector<std::pair<std::uint32_t, std::uint32_t>>{
           {0, 4}, {1, 3}, {3, 1}, {0xFFFFFFFF, 2}, {0, 0}, {0, kMostProbeBits + 1}}) {
    Probe probe = probe_from(0);
    probe.first = first;
    probe.count = count;
    probe.heard_bits.assign((count + 7) / 8, 0xFF);
    probe.reported_bits.assign((count + 7) / 8, 0xFF);
    EXPECT_FALSE(decode(frame_of(probe))) << first << "+" << count;
  }
  // A flag that does not exist.
  std::vector<std::byte> flagged = good;
  flagged[14 + 16] = std::byte{2};
  EXPECT_FALSE(decode(flagged));
  // The source MAC is not the claimed pid's published one.
  std::vector<std::byte> spoofed = good;
  spoofed[11] ^= std::byte{1};
  EXPECT_FALSE(decode(spoofed));
  // Any bit flipped after the Ethernet addresses: the EtherType, or a field under the MAC.
  for (std::size_t byte = 12; byte < used; ++byte) {
    std::vector<std::byte> flipped = good;
    flipped[byte] ^= std::byte{0x10};
    EXPECT_FALSE(decode(flipped)) << "byte " << byte;
  }
}

TEST_F(ProbeFixture, AcceptsPaddingBeyondTheProbe) {
  std::vector<std::byte> longer(1500, std::byte{0xAA});
  std::vector<std::byte> frame = frame_from(2, 1);
  std::memcpy(longer.data(), frame.data(), frame.size());
  EXPECT_TRUE(decode(longer));
}

TEST(ProbeSizeTest, TheLargestProbeFitsAnEthernetFrame) {
  Probe probe;
  probe.from = 1;
  probe.to = kEveryone;
  probe.count = kMostProbeBits;
  probe.heard_bits.assign(kMostProbeBits / 8, 0x5A);
  probe.reported_bits.assign(kMostProbeBits / 8, 0xA5);
  std::vector<NicAddress> addresses(kMostProbeBits, NicAddress{"eth0", kMacA, "a"});
  std::vector<std::byte> frame = encode_probe(probe, kMacB, kMacA, key(1));
  EXPECT_LE(frame.size(), 14u + 1500u);
  std::optional<Probe> decoded = decode_probe(frame, 0, 0, addresses, key(1));
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->heard_bits, probe.heard_bits);
  EXPECT_EQ(decoded->reported_bits, probe.reported_bits);
}

// ---- the live exchange, processes as threads on lo ----

SegmentCheck loopback_check(int pid, int processes, std::uint32_t job, std::chrono::milliseconds deadline) {
  SegmentCheck check;
  check.pid = pid;
  check.job_id = job;
  check.secret = key(9);
  check.interface = find_interface("lo");
  check.addresses.assign(static_cast<std::size_t>(processes), NicAddress{"lo", kZero, this_host_name()});
  check.deadline = deadline;
  return check;
}

std::uint32_t fresh_job_id() { return static_cast<std::uint32_t>(::getpid()) * 2654435761u ^ 0x6e696321u; }

TEST(SegmentCheckTest, OneProcessSendsNothing) {
  SegmentCheck check;
  check.addresses = {NicAddress{"nowhere0", kMacA, "h"}};  // no such interface: never opened
  EXPECT_NO_THROW(check_segment(check));
}

TEST(SegmentCheckTest, ProcessesOnLoopbackFindEachOtherQuickly) {
  if (!may_open_packet_sockets()) GTEST_SKIP() << "needs CAP_NET_RAW (root) for packet sockets";
  constexpr int kProcesses = 4;
  std::uint32_t job = fresh_job_id();
  std::vector<std::string> errors(kProcesses);
  std::vector<double> milliseconds(kProcesses);
  std::vector<std::thread> threads;
  for (int pid = 0; pid < kProcesses; ++pid) {
    threads.emplace_back([&, pid] {
      auto started = Clock::now();
      try {
        check_segment(loopback_check(pid, kProcesses, job, 5s));
      } catch (const std::exception& error) {
        errors[pid] = error.what();
      }
      milliseconds[pid] = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
    });
    std::this_thread::sleep_for(3ms);  // staggered, as processes are
  }
  for (std::thread& thread : threads) thread.join();
  for (int pid = 0; pid < kProcesses; ++pid) {
    EXPECT_EQ(errors[pid], "") << "pid " << pid;
    // Everyone is there within a few ms on an idle machine: the check passes on hearing
    // everyone, not by waiting out its deadline (5 s; half of it allows a loaded machine).
    EXPECT_LT(milliseconds[pid], 2500) << "pid " << pid;
  }
}

// Many processes (threads here) start together, as a job's do when the coordinator hands
// out the addresses: each sends a few probes, not one per peer (a probe per pair every
// 10 ms ran out of time at 64 processes on 2 cores), and every one passes.
TEST(SegmentCheckTest, ManyProcessesSendAFewProbesEach) {
  if (!may_open_packet_sockets()) GTEST_SKIP() << "needs CAP_NET_RAW (root) for packet sockets";
  for (int processes : {64, 160}) {
    std::uint32_t job = fresh_job_id() + 7 + static_cast<std::uint32_t>(processes);
    std::vector<std::string> errors(static_cast<std::size_t>(processes));
    std::vector<SegmentCheckCounts> counts(static_cast<std::size_t>(processes));
    std::vector<std::thread> threads;
    auto started = Clock::now();
    for (int pid = 0; pid < processes; ++pid) {
      threads.emplace_back([&, pid] {
        try {
          counts[static_cast<std::size_t>(pid)] = check_segment(loopback_check(pid, processes, job, 20s));
        } catch (const std::exception& error) {
          errors[static_cast<std::size_t>(pid)] = error.what();
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
    double seconds = std::chrono::duration<double>(Clock::now() - started).count();
    std::size_t broadcasts = 0, unicasts = 0, most = 0;
    for (int pid = 0; pid < processes; ++pid) {
      const SegmentCheckCounts& mine = counts[static_cast<std::size_t>(pid)];
      EXPECT_EQ(errors[static_cast<std::size_t>(pid)], "") << "pid " << pid << " of " << processes;
      broadcasts += mine.broadcasts;
      unicasts += mine.unicasts;
      most = std::max(most, mine.broadcasts + mine.unicasts);
    }
    std::printf("%d processes: %.3f s, %.2f broadcasts and %.2f unicasts per process, at most %zu\n", processes,
                seconds, static_cast<double>(broadcasts) / processes, static_cast<double>(unicasts) / processes, most);
    // A few broadcasts each (start, heard everyone, passed, answers), some answers to
    // latecomers: far fewer frames than peers (the old check: at least one per peer, every
    // 10 ms until answered).
    // Measured under a load average of 240: at most 46 per process of 160 (mean).
    EXPECT_LE(broadcasts + unicasts, static_cast<std::size_t>(processes * processes / 2)) << processes << " processes";
    // (One process may answer many latecomers one by one when the threads start spread
    // out on a loaded machine: the largest is printed, not bounded.)
  }
}

// A lost probe is sent again: a process that starts long after the others (its peers'
// first broadcasts long gone) is answered, and everyone passes.
TEST(SegmentCheckTest, ALatecomerIsAnswered) {
  if (!may_open_packet_sockets()) GTEST_SKIP() << "needs CAP_NET_RAW (root) for packet sockets";
  constexpr int kProcesses = 6;
  std::uint32_t job = fresh_job_id() + 3;
  std::vector<std::string> errors(kProcesses);
  std::vector<std::thread> threads;
  for (int pid = 0; pid < kProcesses; ++pid) {
    threads.emplace_back([&, pid] {
      if (pid == kProcesses - 1) std::this_thread::sleep_for(300ms);
      try {
        check_segment(loopback_check(pid, kProcesses, job, 5s));
      } catch (const std::exception& error) {
        errors[pid] = error.what();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int pid = 0; pid < kProcesses; ++pid) EXPECT_EQ(errors[pid], "") << "pid " << pid;
}

// The deadline counts from the last progress: processes that arrive one by one, each
// later than the deadline after the first, all pass (a loaded machine starts them so).
TEST(SegmentCheckTest, ProgressExtendsTheDeadline) {
  if (!may_open_packet_sockets()) GTEST_SKIP() << "needs CAP_NET_RAW (root) for packet sockets";
  constexpr int kProcesses = 5;
  constexpr auto kDeadline = 600ms;
  constexpr auto kStagger = 250ms;  // the last starts 1 s after the first: past 600 ms
  std::uint32_t job = fresh_job_id() + 11;
  std::vector<std::string> errors(kProcesses);
  std::vector<std::thread> threads;
  auto first = Clock::now();
  for (int pid = 0; pid < kProcesses; ++pid) {
    threads.emplace_back([&, pid] {
      std::this_thread::sleep_until(first + pid * kStagger);
      try {
        check_segment(loopback_check(pid, kProcesses, job, kDeadline));
      } catch (const std::exception& error) {
        errors[pid] = error.what();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int pid = 0; pid < kProcesses; ++pid) EXPECT_EQ(errors[pid], "") << "pid " << pid;
}

TEST(SegmentCheckTest, AbsentPeerFailsAtTheDeadlineNamingIt) {
  if (!may_open_packet_sockets()) GTEST_SKIP() << "needs CAP_NET_RAW (root) for packet sockets";
  std::uint32_t job = fresh_job_id() + 1;
  std::string errors[2];
  auto started = Clock::now();
  std::thread other([&] {
    try {
      check_segment(loopback_check(1, 3, job, 400ms));
    } catch (const std::exception& error) {
      errors[1] = error.what();
    }
  });
  try {
    check_segment(loopback_check(0, 3, job, 400ms));  // pid 2 never runs its check
  } catch (const std::exception& error) {
    errors[0] = error.what();
  }
  other.join();
  double seconds = std::chrono::duration<double>(Clock::now() - started).count();
  // It ends (about 400 ms after the last progress): bounded by a generous multiple.
  EXPECT_LT(seconds, 20 * 0.4);
  for (int pid = 0; pid < 2; ++pid) {
    const std::string& error = errors[pid];
    EXPECT_NE(error.find("(nothing new for 400 ms, "), std::string::npos) << error;
    EXPECT_NE(error.find("): it never heard from pid 2 (host"), std::string::npos) << error;
    EXPECT_EQ(error.find("never heard from pid " + std::to_string(1 - pid)), std::string::npos) << error;
    EXPECT_NE(error.find("not on one Ethernet segment"), std::string::npos) << error;
    EXPECT_NE(error.find("--transport=udp"), std::string::npos) << error;
  }
}

TEST(SegmentCheckTest, ProbesOfAnotherJobDoNotCount) {
  if (!may_open_packet_sockets()) GTEST_SKIP() << "needs CAP_NET_RAW (root) for packet sockets";
  std::uint32_t job = fresh_job_id() + 2;
  std::string error;
  std::thread stranger([&] {
    try {
      check_segment(loopback_check(1, 2, job + 1, 300ms));  // right pids, another job
    } catch (const std::exception&) {
    }
  });
  try {
    check_segment(loopback_check(0, 2, job, 300ms));
  } catch (const std::exception& caught) {
    error = caught.what();
  }
  stranger.join();
  EXPECT_NE(error.find("never heard from pid 1"), std::string::npos) << error;
}

}  // namespace
}  // namespace bsp::transport::nic
