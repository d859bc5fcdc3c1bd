// tests/recovery/spin_history_test.cc: spin_then_block's learning (recovery/wait_for_fd.h
// SpinHistory) over a scripted transport: which phases a wait runs after waits whose
// answers came late, and that one answer in time switches a phase back on.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>

#include "recovery/wait_for_fd.h"
#include "transport/transport.h"

namespace bsp::recovery {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// A transport whose ready() turns true `answer_after` after the wait's first poll (never,
// when answer_after is negative); its wait_fd is a pipe that is always empty, so a block
// ends by its timeout. Counts the polls.
class ScriptedTransport final : public transport::Transport {
 public:
  explicit ScriptedTransport(bool unyielded) : unyielded_(unyielded) {
    int ends[2];
    if (::pipe2(ends, O_NONBLOCK | O_CLOEXEC) != 0) throw std::runtime_error("pipe2");
    read_end_ = ends[0];
    write_end_ = ends[1];
  }
  ~ScriptedTransport() override {
    ::close(read_end_);
    ::close(write_end_);
  }

  // A new wait: answered this long after its first poll.
  void next_wait(std::chrono::microseconds answer_after) {
    answer_after_ = answer_after;
    first_poll_ = Clock::time_point{};
    polls_ = 0;
  }
  long polls() const { return polls_; }

  std::string_view name() const override { return "scripted"; }
  transport::Capabilities capabilities() const override {
    transport::Capabilities capabilities;
    capabilities.poll_without_yielding = unyielded_;
    return capabilities;
  }
  std::string local_address() override { return ""; }
  void connect(const std::vector<std::string>&) override {}
  transport::SendStatus send(int, std::span<const std::byte>) override { return transport::SendStatus::sent; }
  std::size_t receive(transport::FrameSink&, std::size_t) override { return 0; }
  bool flush() override { return true; }
  int wait_fd() const override { return read_end_; }
  bool ready() override {
    ++polls_;
    const auto now = Clock::now();
    if (first_poll_ == Clock::time_point{}) first_poll_ = now;
    return answer_after_.count() >= 0 && now - first_poll_ >= answer_after_;
  }

 private:
  bool unyielded_;
  int read_end_ = -1, write_end_ = -1;
  std::chrono::microseconds answer_after_{-1};
  Clock::time_point first_poll_{};
  long polls_ = 0;
};

TEST(SpinHistory, WaitsThatOutlastTheYieldingSpinBlockAtOnceUntilOneIsAnsweredInTime) {
  ScriptedTransport transport(/*unyielded=*/false);
  SpinHistory history;
  for (int wait = 0; wait < 2; ++wait) {  // two waits no spin answers: both spin, then block
    transport.next_wait(-1us);
    EXPECT_FALSE(spin_then_block(transport, 200, 2ms, &history));
    EXPECT_GE(transport.polls(), 1) << "wait " << wait << " spun";
  }
  EXPECT_EQ(history.skip_spin, SpinHistory::kFirstSkip);
  // The next kFirstSkip waits block at once, without a poll.
  for (int wait = 0; wait < SpinHistory::kFirstSkip; ++wait) {
    transport.next_wait(-1us);
    EXPECT_FALSE(spin_then_block(transport, 200, 1ms, &history));
    EXPECT_EQ(transport.polls(), 0) << "wait " << wait << " of the skipped ones";
  }
  // Then a wait spins again; answered within the spin, it keeps spinning on.
  EXPECT_EQ(history.skip_spin, 0);
  transport.next_wait(0us);
  EXPECT_TRUE(spin_then_block(transport, 200, 2ms, &history));
  EXPECT_EQ(history.skip_spin, 0);
  EXPECT_EQ(history.next_skip_spin, SpinHistory::kFirstSkip);
  // Two waits that outlast it again: a skip as short as the first (the answer reset it).
  for (int wait = 0; wait < 2; ++wait) {
    transport.next_wait(-1us);
    spin_then_block(transport, 200, 1ms, &history);
  }
  EXPECT_EQ(history.skip_spin, SpinHistory::kFirstSkip);
}

TEST(SpinHistory, RepeatedOutlastingDoublesTheSkipUpToItsBound) {
  ScriptedTransport transport(/*unyielded=*/false);
  SpinHistory history;
  int expected = SpinHistory::kFirstSkip;
  for (int round = 0; round < 12; ++round) {
    for (int wait = 0; wait < 2; ++wait) {
      transport.next_wait(-1us);
      spin_then_block(transport, 20, 200us, &history);
    }
    ASSERT_EQ(history.skip_spin, expected) << "round " << round;
    history.skip_spin = 0;  // (as if the skipped waits had passed)
    expected = std::min(expected * 2, SpinHistory::kMaxSkip);
  }
}

TEST(SpinHistory, AnswersRightAfterTheUnyieldedPollsSwitchThemOff) {
  ScriptedTransport transport(/*unyielded=*/true);
  SpinHistory history;
  // Answered just after the unyielded polls (5 us, the clock read every 8 polls) run out:
  // a poll after the first yield or two sees it. (A preemption can let an unyielded poll
  // see it, or the yields return so fast that a third one is needed: either rightly counts
  // as a wait the yields did not answer, and the pair is tried again; on a loaded machine
  // most attempts are, so there are many.)
  for (int attempt = 0; attempt < 5000 && history.skip_unyielded == 0; ++attempt) {
    transport.next_wait(6us);
    spin_then_block(transport, 1000, 10ms, &history);  // (a yield may outlast the spin under load)
  }
  EXPECT_EQ(history.skip_unyielded, SpinHistory::kFirstSkip);
  EXPECT_EQ(history.next_skip_unyielded, 2 * SpinHistory::kFirstSkip);
  // The skipped waits poll only while yielding; then an answer within the unyielded polls
  // resets the doubling.
  for (int wait = 0; wait < SpinHistory::kFirstSkip; ++wait) {
    transport.next_wait(0us);
    EXPECT_TRUE(spin_then_block(transport, 1000, 10ms, &history));
  }
  EXPECT_EQ(history.skip_unyielded, 0);
  transport.next_wait(0us);
  EXPECT_TRUE(spin_then_block(transport, 1000, 10ms, &history));
  EXPECT_EQ(history.next_skip_unyielded, SpinHistory::kFirstSkip);
  EXPECT_EQ(history.skip_unyielded, 0);
  // Without a history nothing is learned and the waits still work.
  transport.next_wait(0us);
  EXPECT_TRUE(spin_then_block(transport, 100, 1ms));
}

}  // namespace
}  // namespace bsp::recovery
