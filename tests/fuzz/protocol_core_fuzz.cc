// tests/fuzz/protocol_core_fuzz.cc: the reliable layer's state machine
// (recovery/protocol_core.h) fed frames that pass the MAC: what a member of the job with a
// bug could send (docs/DESIGN.md §6: "a peer's bytes that are malformed by accident or
// by a bug"). Beyond the four decoders, this reaches what reads a frame after
// check_frame: take_ack, take_data (held frames, the window, overflow), take_report
// (NACK ranges, probes, sent_end), the ack policies and the timers.
//
// Process 0 of a job of 3, a pool of 64 buffers, MTU 1500, a manual clock. The input is a
// program, one op per byte (then its arguments):
//   send a payload to pid 1 or 2 | a sealed frame from pid 1 or 2 (type, seq and ack
//   near what the link has seen or anywhere, flags, credit, a payload or a link report,
//   valid or not; handed over as from the right pid, from an unknown sender, from no
//   member, or from the wrong pid) |
//   advance the clock (µs to seconds) | service() | service_waiting() | refresh_header()
//   on a frame the core sent.
// Checked: every frame the core emits passes check_frame at its destination (the core
// never sends a malformed frame, whatever it was fed) and stays within the MTU; every
// payload it delivers fits the MTU and came in a frame from that peer; nothing crashes,
// reads out of bounds or loops unboundedly (each op is bounded: libFuzzer's -timeout).
#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "recovery/frame_codec.h"
#include "recovery/link_report.h"
#include "recovery/protocol_core.h"
#include "tests/fuzz/fuzz_target.h"

namespace {

using namespace bsp;
using namespace bsp::recovery;
using bsp::fuzz::Input;

constexpr int kPid = 0;
constexpr int kProcs = 3;
constexpr std::uint32_t kJob = 0xB5B5F00Du;
constexpr std::size_t kMtu = 1500;

const auth::Key& secret() {
  static const auth::Key key = [] {
    auth::Key k{};
    for (std::size_t i = 0; i < k.size(); ++i) k[i] = static_cast<std::uint8_t>(i * 37 + 11);
    return k;
  }();
  return key;
}

const wire::FrameKey& frame_key() {
  static const wire::FrameKey key = wire::frame_key(secret());
  return key;
}

struct Output final : FrameOutput {
  std::size_t refuse_after = SIZE_MAX;          // frames taken per batch (flow control)
  std::vector<std::vector<std::byte>> last;     // the last frames sent (for refresh_header)
  std::array<std::uint32_t, kProcs> data_to{};  // data frames sent per peer (first sends and resends)
  std::size_t send_batch(std::span<const transport::OutFrame> frames) override {
    std::size_t taken = 0;
    for (const transport::OutFrame& frame : frames) {
      if (taken >= refuse_after) break;
      FUZZ_CHECK(frame.peer > 0 && frame.peer < kProcs);
      FUZZ_CHECK(frame.bytes.size() >= wire::kHeaderSize && frame.bytes.size() <= kMtu);
      wire::Header header;
      FUZZ_CHECK(wire::check_frame(frame.bytes, frame_key(), kJob, frame.peer, kProcs, header) == wire::Verdict::ok);
      FUZZ_CHECK(header.src == kPid && header.dst == frame.peer);
      if (header.type == static_cast<std::uint8_t>(wire::FrameType::data))
        ++data_to[static_cast<std::size_t>(frame.peer)];
      if (header.type != static_cast<std::uint8_t>(wire::FrameType::data)) {
        FUZZ_CHECK(decode_report(frame.bytes.subspan(wire::kHeaderSize)).has_value());
      }
      last.emplace_back(frame.bytes.begin(), frame.bytes.end());
      if (last.size() > 8) last.erase(last.begin());
      ++taken;
    }
    return taken;
  }
};

struct Sink final : PayloadSink {
  std::size_t delivered = 0;
  void on_payload(int peer, std::span<const std::byte> payload) override {
    FUZZ_CHECK(peer > 0 && peer < kProcs);
    FUZZ_CHECK(payload.size() <= kMtu - wire::kHeaderSize);
    std::uint32_t sum = 0;
    for (std::byte b : payload) sum += static_cast<std::uint32_t>(b);  // every byte readable
    volatile std::uint32_t sink = sum;
    (void)sink;
    ++delivered;
  }
  void on_peer_lost(int, std::string_view) override {}
};

std::uint32_t near(Input& input, std::uint32_t base) {
  switch (input.u8() % 8) {
    case 0:
      return input.u32();  // anywhere
    case 1:
      return base + 1000000u;  // far ahead
    case 2:
      return base - 1 - input.u8();  // behind
    default:
      return base + static_cast<std::uint32_t>(input.u8() % 16);  // about right
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Input input(data, size);
  static const char* const kPolicies[] = {"buffer", "every", "pupa"};
  ManualClock clock;
  Output output;
  Sink sink;
  CoreConfig config{kPid, kProcs, kJob, 64, kMtu, kPolicies[input.u8() % 3], secret()};
  ProtocolCore core(config, clock, output);
  std::array<std::uint32_t, kProcs> their_seq{};  // data frames "sent" to us per peer
  int ops = 0;
  while (input.left() > 0 && ops++ < 400) {
    switch (input.u8() % 8) {
      case 0: {  // the engine sends
        int peer = 1 + input.u8() % 2;
        std::vector<std::byte> payload(input.u16() % (core.max_payload() + 1), std::byte{0x5A});
        (void)core.send(peer, payload);
        break;
      }
      case 1:
      case 2: {  // a member's (sealed) frame arrives
        int src = 1 + input.u8() % 2;
        std::uint8_t type = 1 + input.u8() % 4;
        if (input.u8() % 16 == 0) type = static_cast<std::uint8_t>(input.u8());  // (seal lets any type through the MAC)
        wire::Header header{};
        header.type = type;
        header.job_id = kJob;
        header.src = static_cast<std::uint16_t>(src);
        header.dst = kPid;
        header.seq = near(input, their_seq[static_cast<std::size_t>(src)]);
        header.ack = near(input, output.data_to[static_cast<std::size_t>(src)]);
        header.flags = input.u8() & 3;
        header.credit = input.u8() % 4 == 0 ? input.u16() : 32;
        std::vector<std::byte> payload;
        if (type == 1) {
          payload.resize(input.u16() % (kMtu - wire::kHeaderSize + 1));
          for (auto& b : payload) b = static_cast<std::byte>(input.u8());
          if (header.seq == their_seq[static_cast<std::size_t>(src)]) ++their_seq[static_cast<std::size_t>(src)];
        } else if (input.u8() % 4 != 0) {
          LinkReport report;
          report.received_end = near(input, output.data_to[static_cast<std::size_t>(src)]);
          report.sent_end = near(input, their_seq[static_cast<std::size_t>(src)]);
          report.echo = input.u8() % 2 ? input.u32() : 0;
          for (int n = input.u8() % 6; n > 0; --n) {
            std::uint32_t begin = near(input, 0);
            report.missing.push_back({begin, begin + 1 + (input.u8() % 2 ? input.u32() % 0x7FFFFFFF : input.u8())});
          }
          payload.resize(report_size(report.missing.size()));
          encode_report(report, payload);
        } else {
          payload.resize(input.u8());
          for (auto& b : payload) b = static_cast<std::byte>(input.u8());
        }
        std::vector<std::byte> frame(wire::kHeaderSize + payload.size());
        std::memcpy(frame.data(), &header, wire::kHeaderSize);
        if (!payload.empty()) std::memcpy(frame.data() + wire::kHeaderSize, payload.data(), payload.size());
        wire::seal_frame(frame, frame_key());
        int from = src;
        switch (input.u8() % 8) {
          case 0:
            from = -1;
            break;  // unknown (nic)
          case 1:
            from = 3 - src;
            break;  // the other peer's address
          case 2:
            from = transport::kNotAMember;
            break;  // no member's address (udp)
          default:
            break;
        }
        // An exact-size copy: reads past the frame are reports.
        bsp::fuzz::ExactCopy exact(frame.data(), frame.size());
        (void)core.on_frame(from, {exact.data(), exact.size()}, sink);
        break;
      }
      case 3: {
        std::uint32_t amount = input.u8() % 4 == 0 ? input.u32() % 5000000 : input.u16();
        clock.advance(std::chrono::microseconds(amount));
        break;
      }
      case 4:
        core.service(input.u8() % 2 == 0);
        break;
      case 5: {
        const int awaited[] = {1, 2};
        core.service_waiting(awaited);
        break;
      }
      case 6:
        if (!output.last.empty()) {
          std::vector<std::byte> frame = output.last[input.u8() % output.last.size()];
          wire::Header header;
          std::memcpy(&header, frame.data(), wire::kHeaderSize);
          core.refresh_header(header.dst, frame);
          FUZZ_CHECK(wire::check_frame(frame, frame_key(), kJob, header.dst, kProcs, header) == wire::Verdict::ok);
        }
        break;
      case 7:
        output.refuse_after = input.u8() % 4 == 0 ? input.u8() % 4 : SIZE_MAX;
        break;
    }
    (void)core.next_deadline();
    (void)core.output_pending();
    (void)core.all_acknowledged();
  }
  return 0;
}

std::vector<std::vector<std::uint8_t>> fuzz_seeds() {
  // policy, then ops: sends, in-order data from pid 1, acks, time, service.
  std::vector<std::vector<std::uint8_t>> seeds;
  seeds.push_back({0,  0,  1,  100, 0,  4,  1,  1,  0,  0,  3,  0,  3,  0,    0,    0,  32, 0,  1,
                   2,  3,  4,  5,   6,  7,  8,  9,  10, 11, 12, 13, 14, 15,   16,   17, 18, 19, 20,
                   21, 22, 23, 24,  25, 26, 27, 28, 29, 30, 31, 2,  3,  0x10, 0x27, 4,  0});
  seeds.push_back(
      {1, 0, 2, 200, 0, 4, 0, 2, 1, 1, 3, 1, 3, 1, 3, 0, 3, 0, 0, 3, 16, 0, 5, 1, 1, 2, 0, 1, 3, 0xE8, 0x03, 5});
  seeds.push_back(
      {2, 0, 1, 50, 0, 0, 2, 60, 0, 4, 1, 2, 2, 3, 0, 3, 1, 3, 0, 0, 3, 1, 3, 1, 1, 2, 3, 5, 9, 1, 4, 1, 6, 0});
  return seeds;
}
