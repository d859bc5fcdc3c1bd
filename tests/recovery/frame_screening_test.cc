// tests/recovery/frame_screening_test.cc: what the protocol core refuses and counts:
// short, malformed, foreign (other job, other destination, impostor source) and corrupt
// frames; malformed ack/NACK payloads; and the NACK/probe payload codec itself.
#include <gtest/gtest.h>

#include <cstring>

#include "recovery/crc32c.h"
#include "recovery/frame_codec.h"
#include "recovery/link_report.h"
#include "recovery/protocol_core.h"
#include "tests/recovery/memory_network.h"

namespace bsp::recovery {
namespace {

using namespace std::chrono_literals;

class NullSink final : public PayloadSink {
 public:
  void on_payload(int, std::span<const std::byte>) override { ++payloads; }
  void on_peer_lost(int, std::string_view) override {}
  int payloads = 0;
};

std::vector<std::byte> data_frame(std::uint32_t job, int src, int dst, std::uint32_t seq, std::size_t length,
                                  const auth::Key& secret = auth::Key{}) {
  std::vector<std::byte> frame(wire::kHeaderSize + length, std::byte{0x5A});
  wire::Header header{};
  header.type = static_cast<std::uint8_t>(wire::FrameType::data);
  header.job_id = job;
  header.src = static_cast<std::uint16_t>(src);
  header.dst = static_cast<std::uint16_t>(dst);
  header.seq = seq;
  std::memcpy(frame.data(), &header, wire::kHeaderSize);
  wire::seal_frame(frame, wire::frame_key(secret));
  return frame;
}

class FrameScreeningTest : public ::testing::Test {
 protected:
  ManualClock clock;
  testing::MemoryNetwork network{3, clock, 1us, 1us};
  ProtocolCore core{CoreConfig{1, 3, 77, 0, 1472, "buffer"}, clock, network.output(1)};
  NullSink sink;
};

TEST_F(FrameScreeningTest, GoodFrameIsDelivered) {
  EXPECT_EQ(core.on_frame(0, data_frame(77, 0, 1, 0, 10), sink), 1u);
  EXPECT_EQ(sink.payloads, 1);
  EXPECT_EQ(core.stats().data_received, 1u);
}

TEST_F(FrameScreeningTest, BadFramesAreCountedAndDropped) {
  std::vector<std::byte> shorty(10, std::byte{0});
  core.on_frame(0, shorty, sink);
  EXPECT_EQ(core.stats().malformed_dropped, 1u);

  auto bad_length = data_frame(77, 0, 1, 0, 10);
  bad_length.pop_back();
  core.on_frame(0, bad_length, sink);
  EXPECT_EQ(core.stats().malformed_dropped, 2u);

  core.on_frame(0, data_frame(78, 0, 1, 0, 10), sink);  // another job
  core.on_frame(0, data_frame(77, 0, 2, 0, 10), sink);  // for pid 2
  core.on_frame(2, data_frame(77, 0, 1, 0, 10), sink);  // pid 2 claiming to be pid 0
  core.on_frame(0, data_frame(77, 5, 1, 0, 10), sink);  // no such pid
  EXPECT_EQ(core.stats().foreign_dropped, 4u);

  auto corrupt = data_frame(77, 0, 1, 0, 10);
  corrupt[wire::kHeaderSize + 3] ^= std::byte{1};
  core.on_frame(0, corrupt, sink);
  EXPECT_EQ(core.stats().corrupt_dropped, 1u);

  EXPECT_EQ(sink.payloads, 0);
  EXPECT_EQ(core.stats().data_received, 0u);
}

TEST_F(FrameScreeningTest, NackWithBrokenPayloadIsMalformed) {
  std::vector<std::byte> frame(wire::kHeaderSize + kReportHeadSize + 3, std::byte{0});
  wire::Header header{};
  header.type = static_cast<std::uint8_t>(wire::FrameType::nack);
  header.job_id = 77;
  header.src = 0;
  header.dst = 1;
  std::memcpy(frame.data(), &header, wire::kHeaderSize);
  wire::seal_frame(frame, wire::frame_key(auth::Key{}));
  core.on_frame(0, frame, sink);
  EXPECT_EQ(core.stats().malformed_dropped, 1u);
  EXPECT_EQ(core.stats().nacks_received, 0u);
}

TEST_F(FrameScreeningTest, DuplicateIsDroppedAndReacknowledged) {
  core.on_frame(0, data_frame(77, 0, 1, 0, 10), sink);
  core.on_frame(0, data_frame(77, 0, 1, 0, 10), sink);
  EXPECT_EQ(sink.payloads, 1);
  EXPECT_EQ(core.stats().duplicates_received, 1u);
  core.service();
  EXPECT_EQ(core.stats().explicit_acks_sent, 1u);
}

// Frames sealed without the job's secret (here: with another key) are foreign, however
// right their job id, pids and check are; a flipped byte anywhere after sealing is caught.
TEST_F(FrameScreeningTest, FramesWithoutTheSecretAreForeign) {
  auth::Key other{};
  other[0] = 1;
  core.on_frame(0, data_frame(77, 0, 1, 0, 10, other), sink);
  EXPECT_EQ(core.stats().foreign_dropped, 1u);
  auto forged = data_frame(77, 0, 1, 0, 10);
  std::uint64_t mac;
  std::memcpy(&mac, forged.data() + offsetof(wire::Header, mac), 8);
  mac ^= 1;  // a guessed tag (the check is zeroed: damage or forgery, never taken)
  std::memcpy(forged.data() + offsetof(wire::Header, mac), &mac, 8);
  std::uint16_t zero = 0;
  std::memcpy(forged.data() + offsetof(wire::Header, check), &zero, 2);
  core.on_frame(0, forged, sink);
  EXPECT_GE(core.stats().foreign_dropped + core.stats().corrupt_dropped, 2u);
  EXPECT_EQ(sink.payloads, 0);
  EXPECT_EQ(core.stats().data_received, 0u);
}

// Sequence numbers far beyond what a member could have in flight are refused, and never
// take a buffer from the shared pool.
TEST_F(FrameScreeningTest, SequenceNumbersBeyondTheWindowAreRefused) {
  for (std::uint32_t seq = 1000000; seq < 1000600; ++seq) core.on_frame(0, data_frame(77, 0, 1, seq, 10), sink);
  EXPECT_EQ(core.stats().window_refused, 600u);
  EXPECT_EQ(core.stats().data_received, 0u);
  EXPECT_EQ(core.on_frame(0, data_frame(77, 0, 1, 0, 10), sink), 1u);  // the real first frame still lands
  core.on_frame(0, data_frame(77, 0, 1, 2, 10), sink);                 // a small gap is held, as always
  EXPECT_EQ(core.stats().data_received, 2u);
}

TEST(LinkReportTest, RoundTripsAndRefusesNonsense) {
  LinkReport report;
  report.received_end = 40;
  report.sent_end = 7;
  report.echo = 12345;
  report.missing = {{3, 5}, {9, 20}};
  std::vector<std::byte> bytes(report_size(2));
  ASSERT_EQ(encode_report(report, bytes), bytes.size());
  auto back = decode_report(bytes);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->received_end, 40u);
  EXPECT_EQ(back->sent_end, 7u);
  EXPECT_EQ(back->echo, 12345u);
  ASSERT_EQ(back->missing.size(), 2u);
  EXPECT_EQ(back->missing[1].begin, 9u);
  EXPECT_EQ(back->missing[1].end, 20u);

  EXPECT_FALSE(decode_report(std::span(bytes).first(bytes.size() - 1)).has_value());
  report.missing = {{5, 5}};
  std::vector<std::byte> empty_range(report_size(1));
  encode_report(report, empty_range);
  EXPECT_FALSE(decode_report(empty_range).has_value());
}

// The 32-byte header of version 4 (recovery/wire.h), byte by byte: a 1500-byte udp
// datagram carries 1440 payload bytes; the fields nic's BPF filter reads stay where they
// were; type and flags share byte 1; a frame of versions 1-3 (0xB5 0xB5 first) is malformed.
TEST_F(FrameScreeningTest, WireHeaderVersion4Layout) {
  EXPECT_EQ(wire::kHeaderSize, 32u);
  EXPECT_EQ(1500u - 20u - 8u - wire::kHeaderSize, 1440u);
  EXPECT_EQ(offsetof(wire::Header, job_id), 4u);
  EXPECT_EQ(offsetof(wire::Header, dst), 10u);
  EXPECT_EQ(offsetof(wire::Header, check), 2u);
  EXPECT_EQ(offsetof(wire::Header, mac), 24u);
  wire::Header header{};
  header.type = static_cast<std::uint8_t>(wire::FrameType::probe);
  header.flags = wire::kFlagAckRequest;
  std::uint8_t bytes[sizeof header];
  std::memcpy(bytes, &header, sizeof header);
  EXPECT_EQ(bytes[wire::kTypeOffset], 0x14);  // type in the low 4 bits, flags in the high 4

  auto frame = data_frame(77, 0, 1, 0, 10);
  EXPECT_EQ(static_cast<std::uint8_t>(frame[0]), wire::kMagic);
  auto old = frame;
  old[0] = std::byte{0xB5};  // what versions 1-3 began with
  old[1] = std::byte{0xB5};
  core.on_frame(0, old, sink);
  EXPECT_EQ(core.stats().malformed_dropped, 1u);
  EXPECT_EQ(sink.payloads, 0);
}

// The seal is what frame_codec.h defines, byte for byte, whichever way it is taken: the mac is
// SipHash-2-4 under the header key of the 32 header bytes with the check zero and the
// payload's MAC in the mac field, the check the low 16 bits of CRC32C over the payload's
// fold and then the header bytes with the check zero. Every field holds a distinct value, so
// a field formed in the wrong place of its word changes the result.
TEST(FrameSeal, MatchesTheDefinitionByteForByte) {
  const auth::Key secret{9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 11, 12, 13, 14, 15, 16};
  const wire::FrameKey key = wire::frame_key(secret);
  for (std::size_t length : {5, 200, 1468}) {
    std::vector<std::byte> payload(length);
    for (std::size_t i = 0; i < length; ++i) payload[i] = static_cast<std::byte>(i * 37 + 11);
    wire::Header fields{};
    fields.type = static_cast<std::uint8_t>(wire::FrameType::nack);
    fields.flags = wire::kFlagAckRequest;
    fields.job_id = 0xA1B2C3D4u;
    fields.src = 0x0102;
    fields.dst = 0x0304;
    fields.seq = 0x05060708u;
    fields.ack = 0x090A0B0Cu;
    fields.credit = 0x0D0E;

    auth::Fold fold{};
    wire::Header expected = fields;
    expected.magic = wire::kMagic;
    expected.length = static_cast<std::uint16_t>(length);
    expected.check = 0;
    expected.mac = auth::bulk_mac(key.payload, payload, &fold);
    std::byte bytes[wire::kHeaderSize];
    std::memcpy(bytes, &expected, wire::kHeaderSize);
    expected.mac = auth::mac(key.header, {std::span<const std::byte>(bytes)});
    std::memcpy(bytes, &expected, wire::kHeaderSize);
    expected.check = static_cast<std::uint16_t>(
        crc32c(std::span<const std::byte>(bytes), crc32c(std::as_bytes(std::span(fold)))));

    std::vector<std::byte> frame(wire::kHeaderSize + length);
    std::memcpy(frame.data(), &fields, wire::kHeaderSize);
    std::memcpy(frame.data() + wire::kHeaderSize, payload.data(), length);
    wire::seal_frame(frame, key);
    wire::Header sealed;
    std::memcpy(&sealed, frame.data(), wire::kHeaderSize);
    EXPECT_EQ(sealed.mac, expected.mac) << length;
    EXPECT_EQ(sealed.check, expected.check) << length;
    EXPECT_EQ(std::memcmp(&sealed, &expected, wire::kHeaderSize), 0) << length;

    // Sealed as the sender does: the payload copied with its seal, the header from fields.
    std::vector<std::byte> sent(wire::kHeaderSize + length);
    const wire::PayloadSeal payload_seal = wire::copy_payload(sent.data() + wire::kHeaderSize, payload, key);
    wire::seal_header(std::span(sent).first(wire::kHeaderSize), fields, length, key, payload_seal);
    EXPECT_EQ(sent, frame) << length;
    wire::Header received;
    EXPECT_EQ(wire::check_frame(frame, key, fields.job_id, fields.dst, 0x0200, received), wire::Verdict::ok);
  }
}

// Credit travels in 16 bits: "no limit" both ways, counts saturate below it.
TEST(WireCredit, EncodesNoLimitAndSaturates) {
  EXPECT_EQ(wire::encode_credit(0xFFFFFFFFu), wire::kWireUnlimitedCredit);
  EXPECT_EQ(wire::decode_credit(wire::kWireUnlimitedCredit), 0xFFFFFFFFu);
  EXPECT_EQ(wire::decode_credit(wire::encode_credit(0)), 0u);
  EXPECT_EQ(wire::decode_credit(wire::encode_credit(1234)), 1234u);
  EXPECT_EQ(wire::encode_credit(70000), wire::kWireUnlimitedCredit - 1);  // never "no limit" by accident
}

// A damaged frame of a member is counted corrupt by the 16-bit check (its MAC fails),
// and one whose check was rewritten by a stranger is foreign: the MAC refuses both.
TEST_F(FrameScreeningTest, CheckTellsDamageFromForgery) {
  auto damaged = data_frame(77, 0, 1, 0, 100);
  damaged[wire::kHeaderSize + 50] ^= std::byte{0x01};
  core.on_frame(0, damaged, sink);
  EXPECT_EQ(core.stats().corrupt_dropped, 1u);
  EXPECT_EQ(core.stats().foreign_dropped, 0u);
  EXPECT_EQ(sink.payloads, 0);
}

// Long payloads take the 32-lane MAC and a check over the payload's fold: a byte flipped
// at the start, inside, or at the end (in the padded last block) is refused and counted
// corrupt; with the check rewritten to match the damage (as anyone can: frame_check), the
// MAC alone refuses it and it is foreign. Nothing reaches the sink either way.
TEST_F(FrameScreeningTest, TamperedLongPayloadIsRefused) {
  std::uint64_t corrupt = 0;
  std::uint64_t foreign = 0;
  for (std::size_t length : {512, 1440, 8152, 65000}) {
    for (std::size_t at : {std::size_t{0}, std::size_t{70}, length / 2, length - 1}) {
      auto damaged = data_frame(77, 0, 1, 0, length);
      damaged[wire::kHeaderSize + at] ^= std::byte{0x40};
      core.on_frame(0, damaged, sink);
      EXPECT_EQ(core.stats().corrupt_dropped, ++corrupt) << length << " " << at;
      auto span = std::span<std::byte>(damaged);
      const std::uint16_t check = wire::frame_check(span.first(wire::kHeaderSize), span.subspan(wire::kHeaderSize));
      std::memcpy(damaged.data() + offsetof(wire::Header, check), &check, sizeof check);
      core.on_frame(0, damaged, sink);
      EXPECT_EQ(core.stats().foreign_dropped, ++foreign) << length << " " << at;
    }
  }
  EXPECT_EQ(sink.payloads, 0);
  EXPECT_EQ(core.stats().data_received, 0u);
  EXPECT_EQ(core.on_frame(0, data_frame(77, 0, 1, 0, 65000), sink), 1u);  // the intact frame lands
  EXPECT_EQ(sink.payloads, 1);
}

// A sink that gives room (as the engine's stream does): what is confirmed is appended,
// what is given up leaves nothing.
class PlacingSink final : public PayloadSink {
 public:
  void on_payload(int, std::span<const std::byte> payload) override {
    EXPECT_FALSE(outstanding) << "a payload delivered while room is outstanding";
    stream.insert(stream.end(), payload.begin(), payload.end());
    ++appended;
  }
  void on_peer_lost(int, std::string_view) override {}
  std::span<std::byte> payload_room(int, std::size_t size) override {
    room.assign(size, std::byte{0});
    outstanding = true;
    return room;
  }
  void on_payload_placed(int) override {
    EXPECT_TRUE(outstanding);
    stream.insert(stream.end(), room.begin(), room.end());
    outstanding = false;
    ++placed;
  }
  void payload_abandoned(int) override {
    outstanding = false;
    ++abandoned;
  }
  std::vector<std::byte> stream, room;
  bool outstanding = false;
  int appended = 0, placed = 0, abandoned = 0;
};

// A data frame whose payload bytes follow a pattern of seq (not one value repeated).
std::vector<std::byte> patterned_frame(std::uint32_t seq, std::size_t length) {
  auto frame = data_frame(77, 0, 1, seq, length);
  for (std::size_t i = 0; i < length; ++i) frame[wire::kHeaderSize + i] = static_cast<std::byte>(i * 7 + seq);
  wire::seal_frame(frame, wire::frame_key(auth::Key{}));
  return frame;
}

// The next large data frame in order is verified while its payload is copied into the
// sink's room (one pass): a damaged or re-checked forgery leaves nothing in the stream
// (the room is given up, the frame counted as before); a good one is confirmed there;
// frames out of order, behind held ones, small, or from an address not the sender's are
// delivered as before; the stream ends up holding exactly the payloads, in order.
TEST_F(FrameScreeningTest, InOrderPayloadIsCopiedByTheMacPassOnlyWhenItVerifies) {
  PlacingSink placing;
  auto damaged = patterned_frame(0, 8152);
  damaged[wire::kHeaderSize + 4000] ^= std::byte{0x02};
  EXPECT_EQ(core.on_frame(0, damaged, placing), 0u);
  EXPECT_EQ(core.stats().corrupt_dropped, 1u);
  auto span = std::span<std::byte>(damaged);
  const std::uint16_t check = wire::frame_check(span.first(wire::kHeaderSize), span.subspan(wire::kHeaderSize));
  std::memcpy(damaged.data() + offsetof(wire::Header, check), &check, sizeof check);
  EXPECT_EQ(core.on_frame(0, damaged, placing), 0u);
  EXPECT_EQ(core.stats().foreign_dropped, 1u);
  EXPECT_EQ(placing.abandoned, 2);
  EXPECT_EQ(core.on_frame(2, patterned_frame(0, 8152), placing), 0u);  // pid 2's address
  EXPECT_EQ(core.stats().foreign_dropped, 2u);
  EXPECT_TRUE(placing.stream.empty());
  EXPECT_EQ(placing.placed, 0);

  std::vector<std::byte> expected;
  auto keep = [&](const std::vector<std::byte>& frame) {
    expected.insert(expected.end(), frame.begin() + wire::kHeaderSize, frame.end());
  };
  auto f0 = patterned_frame(0, 8152), f1 = patterned_frame(1, 1440), f2 = patterned_frame(2, 65000);
  auto f3 = patterned_frame(3, 100), f4 = patterned_frame(4, 600);
  EXPECT_EQ(core.on_frame(0, f0, placing), 1u);
  EXPECT_EQ(placing.placed, 1);
  EXPECT_EQ(core.on_frame(0, f2, placing), 0u);  // early: held, no room asked
  EXPECT_EQ(core.on_frame(0, f1, placing), 2u);  // in order, but one is held behind it
  EXPECT_EQ(core.on_frame(0, f0, placing), 0u);  // a duplicate
  EXPECT_EQ(core.on_frame(0, f3, placing), 1u);  // small
  EXPECT_EQ(core.on_frame(0, f4, placing), 1u);
  for (const auto* frame : {&f0, &f1, &f2, &f3, &f4}) keep(*frame);
  EXPECT_EQ(placing.placed, 2);  // f0 and f4
  EXPECT_EQ(placing.appended, 3);
  EXPECT_EQ(core.stats().copied_in_place, 2u);
  EXPECT_EQ(core.stats().duplicates_received, 1u);
  EXPECT_FALSE(placing.outstanding);
  EXPECT_TRUE(placing.stream == expected);
}

}  // namespace
}  // namespace bsp::recovery
