// tests/transport/datagram_batching_test.cc: udp's segmentation offload arithmetic
// (transport/udp/datagram_batching.h): which frames form one UDP_SEGMENT send, and how a
// UDP_GRO buffer is cut back into frames when the segment size and lengths are hostile,
// and which segment sizes are refused before any cutting.
#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "transport/udp/datagram_batching.h"

namespace bsp::transport::udp {
namespace {

std::vector<OutFrame> frames_of(const std::vector<std::pair<int, std::size_t>>& shape,
                                std::vector<std::byte>& storage) {
  storage.assign(70000, std::byte{1});
  std::vector<OutFrame> frames;
  for (auto [peer, size] : shape) frames.push_back(OutFrame{peer, std::span<const std::byte>(storage).first(size)});
  return frames;
}

TEST(GsoRunTest, EqualFramesToOnePeerFormOneRunEndedByAShorterOne) {
  std::vector<std::byte> storage;
  auto frames = frames_of({{1, 100}, {1, 100}, {1, 100}, {1, 40}, {1, 100}}, storage);
  EXPECT_EQ(gso_run(frames), 4u);  // the shorter frame is the run's last
  EXPECT_EQ(gso_run(std::span(frames).subspan(4)), 1u);
  EXPECT_EQ(gso_run({}), 0u);
}

TEST(GsoRunTest, AnotherPeerOrALongerFrameEndsTheRun) {
  std::vector<std::byte> storage;
  auto other_peer = frames_of({{1, 100}, {1, 100}, {2, 100}}, storage);
  EXPECT_EQ(gso_run(other_peer), 2u);
  auto longer = frames_of({{1, 100}, {1, 200}}, storage);
  EXPECT_EQ(gso_run(longer), 1u);
  auto empty_first = frames_of({{1, 0}, {1, 0}}, storage);
  EXPECT_EQ(gso_run(empty_first), 1u);  // a zero-size segment is no segment
  auto empty_next = frames_of({{1, 10}, {1, 0}}, storage);
  EXPECT_EQ(gso_run(empty_next), 1u);
}

TEST(GsoRunTest, RunsStayWithinTheSegmentAndByteLimits) {
  std::vector<std::byte> storage;
  std::vector<std::pair<int, std::size_t>> shape(200, {1, 8192});
  auto frames = frames_of(shape, storage);
  EXPECT_EQ(gso_run(frames), 7u);  // 8 x 8192 = 65536 > 65507
  std::vector<std::pair<int, std::size_t>> small(200, {1, 100});
  auto many = frames_of(small, storage);
  EXPECT_EQ(gso_run(many), kMaxSegments);
  EXPECT_EQ(gso_run(many, 3), 3u);
  auto huge = frames_of({{1, 65507}, {1, 65507}}, storage);
  EXPECT_EQ(gso_run(huge), 1u);
}

std::vector<std::size_t> split_lengths(std::size_t buffer_size, std::size_t segment, std::size_t largest) {
  std::vector<std::byte> buffer(buffer_size);
  std::vector<std::size_t> lengths;
  const std::byte* end = buffer.data() + buffer.size();
  std::size_t count = split_coalesced(buffer, segment, largest, [&](std::span<const std::byte> frame) {
    EXPECT_GE(frame.data(), buffer.data());
    EXPECT_LE(frame.data() + frame.size(), end);  // nothing outside the buffer
    lengths.push_back(frame.size());
  });
  EXPECT_EQ(count, lengths.size());
  return lengths;
}

TEST(SplitCoalescedTest, CutsIntoSegmentsWithAShorterLast) {
  EXPECT_EQ(split_lengths(3 * 1000 + 300, 1000, 1001), (std::vector<std::size_t>{1000, 1000, 1000, 300}));
  EXPECT_EQ(split_lengths(2000, 1000, 1001), (std::vector<std::size_t>{1000, 1000}));
}

TEST(SplitCoalescedTest, HostileSegmentSizesMeanOneDatagram) {
  EXPECT_EQ(split_lengths(500, 0, 1001), (std::vector<std::size_t>{500}));  // no cmsg / zero
  EXPECT_EQ(split_lengths(500, 500, 1001), (std::vector<std::size_t>{500}));
  EXPECT_EQ(split_lengths(500, 65536, 1001), (std::vector<std::size_t>{500}));  // larger than the buffer
  EXPECT_EQ(split_lengths(500, ~std::size_t{0}, 1001), (std::vector<std::size_t>{500}));
  EXPECT_EQ(split_lengths(0, 1000, 1001), (std::vector<std::size_t>{0}));  // an empty datagram
  EXPECT_EQ(split_lengths(0, 0, 1001), (std::vector<std::size_t>{0}));
}

TEST(SplitCoalescedTest, SegmentsLongerThanAFrameAreCutToShowTruncated) {
  // Segments of 3000 where frames are at most 1000 bytes: each handed on as 1001 bytes
  // (the layer above sees a length that disagrees with its header), never more.
  EXPECT_EQ(split_lengths(7000, 3000, 1001), (std::vector<std::size_t>{1001, 1001, 1000}));
  // A tiny segment size on a large buffer: many pieces, each within the buffer, no loop.
  auto ones = split_lengths(65536, 1, 1001);
  EXPECT_EQ(ones.size(), 65536u);
}

// The shape check a coalesced buffer passes before it is cut: segments of a frame's size,
// no more of them than the kernel coalesces, a last segment that is still a whole frame.
TEST(CoalescedShapeTest, SegmentSizesOursCouldHaveHadPass) {
  EXPECT_TRUE(coalesced_shape_ok(3 * 1472, 1472, 32, 1472));
  EXPECT_TRUE(coalesced_shape_ok(44 * 1472 + 100, 1472, 32, 1472));  // a shorter last
  EXPECT_TRUE(coalesced_shape_ok(64 * 32, 32, 32, 1472));
  EXPECT_TRUE(coalesced_shape_ok(500, 0, 32, 1472));    // no cmsg: one datagram
  EXPECT_TRUE(coalesced_shape_ok(500, 500, 32, 1472));  // one segment
  EXPECT_TRUE(coalesced_shape_ok(500, 9000, 32, 1472));
}

TEST(CoalescedShapeTest, HostileSegmentSizesAreRefused) {
  EXPECT_FALSE(coalesced_shape_ok(65536, 1, 32, 1472));        // would be 65536 "frames"
  EXPECT_FALSE(coalesced_shape_ok(65536, 31, 32, 1472));       // shorter than any frame
  EXPECT_FALSE(coalesced_shape_ok(3 * 3000, 3000, 32, 1472));  // longer than the largest frame
  EXPECT_FALSE(coalesced_shape_ok(129 * 100, 100, 1, 1472));   // more segments than the kernel makes
  EXPECT_TRUE(coalesced_shape_ok(128 * 100, 100, 1, 1472));
  EXPECT_FALSE(coalesced_shape_ok(2 * 1472 + 10, 1472, 32, 1472));  // a last piece no frame can be
}

}  // namespace
}  // namespace bsp::transport::udp
