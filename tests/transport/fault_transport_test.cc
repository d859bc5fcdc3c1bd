// tests/transport/fault_transport_test.cc: the fault decorator over an in-memory transport:
// spec parsing, rates near the asked ones, repeatability per seed and pid, what reorder,
// duplicate and corrupt do to the frames, held frames flushed.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <vector>

#include "transport/fault/fault_transport.h"

namespace bsp::transport {
namespace {

// Records what would have gone on the wire.
class RecordingTransport final : public Transport {
 public:
  explicit RecordingTransport(std::vector<std::vector<std::byte>>* wire) : wire_(wire) {}
  std::string_view name() const override { return "recording"; }
  Capabilities capabilities() const override { return Capabilities{1500, true}; }
  std::string local_address() override { return "here"; }
  void connect(const std::vector<std::string>&) override {}
  SendStatus send(int, std::span<const std::byte> frame) override {
    wire_->emplace_back(frame.begin(), frame.end());
    return SendStatus::sent;
  }
  std::size_t receive(FrameSink&, std::size_t) override { return 0; }
  bool flush() override { return true; }
  int wait_fd() const override { return -1; }

 private:
  std::vector<std::vector<std::byte>>* wire_;
};

std::vector<std::byte> numbered(int i) {
  std::vector<std::byte> bytes(64, std::byte{0});
  std::memcpy(bytes.data(), &i, sizeof i);
  return bytes;
}

int number_of(const std::vector<std::byte>& bytes) {
  int i;
  std::memcpy(&i, bytes.data(), sizeof i);
  return i;
}

std::vector<std::vector<std::byte>> run(std::string_view spec, int pid, int frames) {
  std::vector<std::vector<std::byte>> wire;
  auto faulty = wrap_with_faults(std::make_unique<RecordingTransport>(&wire), spec, pid);
  for (int i = 0; i < frames; ++i) EXPECT_EQ(faulty->send(1, numbered(i)), SendStatus::sent);
  EXPECT_TRUE(faulty->flush());
  return wire;
}

TEST(FaultSpecTest, ParsesEveryKey) {
  FaultSpec spec = parse_fault_spec("drop=0.05,dup=0.01,reorder=0.02,corrupt=0.001,seed=7");
  EXPECT_DOUBLE_EQ(spec.drop, 0.05);
  EXPECT_DOUBLE_EQ(spec.dup, 0.01);
  EXPECT_DOUBLE_EQ(spec.reorder, 0.02);
  EXPECT_DOUBLE_EQ(spec.corrupt, 0.001);
  EXPECT_EQ(spec.seed, 7u);
  EXPECT_DOUBLE_EQ(parse_fault_spec("").drop, 0.0);
}

TEST(FaultSpecTest, BadSpecsSayWhatIsWrong) {
  auto message = [](std::string_view spec) {
    try {
      parse_fault_spec(spec);
    } catch (const std::runtime_error& error) {
      return std::string(error.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message("lose=0.1").find("unknown setting 'lose'"), std::string::npos);
  EXPECT_NE(message("drop=abc").find("drop is not a number"), std::string::npos);
  EXPECT_NE(message("drop=1.5").find("between 0 and 1"), std::string::npos);
  EXPECT_NE(message("drop").find("no '='"), std::string::npos);
  EXPECT_NE(message("seed=-3").find("seed"), std::string::npos);
}

TEST(FaultTransportTest, DropsNearTheRateAndRepeatsPerSeedAndPid) {
  auto first = run("drop=0.1,seed=7", 0, 20000);
  EXPECT_NEAR(static_cast<double>(first.size()), 18000.0, 300.0);
  EXPECT_EQ(first, run("drop=0.1,seed=7", 0, 20000));
  EXPECT_NE(first, run("drop=0.1,seed=7", 1, 20000));
  EXPECT_NE(first, run("drop=0.1,seed=8", 0, 20000));
}

TEST(FaultTransportTest, DuplicatesSendTwice) {
  auto wire = run("dup=0.2,seed=1", 0, 5000);
  EXPECT_NEAR(static_cast<double>(wire.size()), 6000.0, 200.0);
  std::map<int, int> seen;
  for (const auto& frame : wire) ++seen[number_of(frame)];
  for (const auto& [number, times] : seen) EXPECT_LE(times, 2);
  EXPECT_EQ(seen.size(), 5000u);
}

TEST(FaultTransportTest, ReorderSendsAHeldFrameAfterTheNextAndFlushReleasesIt) {
  auto wire = run("reorder=0.1,seed=4", 0, 1000);
  ASSERT_EQ(wire.size(), 1000u);  // nothing lost: the last held one came out at flush
  int swapped = 0;
  for (std::size_t i = 1; i < wire.size(); ++i) {
    if (number_of(wire[i]) < number_of(wire[i - 1])) ++swapped;
  }
  EXPECT_GT(swapped, 50);
  EXPECT_LT(swapped, 150);
  auto always = run("reorder=1,seed=4", 0, 4);
  ASSERT_EQ(always.size(), 4u);
  EXPECT_EQ(number_of(always[0]), 1);  // 0 held, 1 overtakes it
  EXPECT_EQ(number_of(always[1]), 0);
}

TEST(FaultTransportTest, CorruptFlipsExactlyOneBit) {
  auto wire = run("corrupt=1,seed=2", 0, 200);
  ASSERT_EQ(wire.size(), 200u);
  for (std::size_t i = 0; i < wire.size(); ++i) {
    auto clean = numbered(static_cast<int>(i));
    int bits = 0;
    for (std::size_t k = 0; k < clean.size(); ++k) {
      bits += __builtin_popcount(static_cast<unsigned>(clean[k] ^ wire[i][k]));
    }
    EXPECT_EQ(bits, 1);
  }
}

TEST(FaultTransportTest, WrappedTransportIsUnreliableAndCounts) {
  std::vector<std::vector<std::byte>> wire;
  auto faulty = wrap_with_faults(std::make_unique<RecordingTransport>(&wire), "drop=0.5,seed=1", 0);
  EXPECT_FALSE(faulty->capabilities().reliable);
  for (int i = 0; i < 100; ++i) faulty->send(1, numbered(i));
  const FaultCounts* counts = fault_counts(*faulty);
  ASSERT_NE(counts, nullptr);
  EXPECT_EQ(counts->frames, 100u);
  EXPECT_EQ(counts->dropped + wire.size(), 100u);
}

}  // namespace
}  // namespace bsp::transport
