// tests/fuzz/control_message_fuzz.cc: the control plane's message reader
// (bsplib/control/protocol.h MessageReader: i32/u32/u64/str on a body), on arbitrary
// bodies.
//
// Input: byte 0 = mode (mod 4), then:
//   0: a program of reads (byte 1: count; then 2 bits per read: i32, u32, u64, str)
//      and the body they read. Checked: each read either throws "truncated control
//      message" (std::runtime_error) or returns exactly the next bytes of the body; a
//      string never extends past the body; nothing after a throw is trusted;
//   1: the reads the coordinator makes of a message from a session (byte 1: the type;
//      the rest: the body), in the order bsplib/control/coordinator.cc makes them:
//      proof (u64), hello (i32 pid, i32 requested, i32 OS pid, str address, str machine,
//      u64 OS start time), stall
//      (i32, i32, u32 n <= processes, n x i32 pid in range), done/abort (str);
//   2: the reads the process makes of `start` (bsplib/control/control_client.cc:
//      i32 P, u32 job id, P x str address, P x str machine, P x (i32 OS pid, u64 OS start time));
//   3: MessageWriter then MessageReader: the values written read back; the frame's
//      length field is the body's size and its type byte the type.
// Bodies are in heap blocks of their exact size.
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "bsplib/control/protocol.h"
#include "tests/fuzz/fuzz_target.h"

namespace {

using namespace bsp::control;
using bsp::fuzz::ExactCopy;
using bsp::fuzz::Input;

constexpr int kProcesses = 8;  // the coordinator's job size in mode 1

std::string_view view(const ExactCopy& copy) { return {reinterpret_cast<const char*>(copy.data()), copy.size()}; }

template <typename T>
T load(const std::byte* at) {
  T value;
  std::memcpy(&value, at, sizeof value);
  return value;
}

void read_program(Input input) {
  std::size_t count = input.u8() % 32;
  std::vector<int> ops;
  for (std::size_t i = 0; i < count; i += 4) {
    std::uint8_t bits = input.u8();
    for (std::size_t j = i; j < count && j < i + 4; ++j) ops.push_back((bits >> (2 * (j - i))) & 3);
  }
  ExactCopy body(input.rest(), input.left());
  MessageReader reader(view(body));
  std::size_t used = 0;  // bytes the reader has consumed, by our count
  try {
    for (int op : ops) {
      switch (op) {
        case 0: {
          std::int32_t value = reader.i32();
          FUZZ_CHECK(used + 4 <= body.size() && value == load<std::int32_t>(body.data() + used));
          used += 4;
          break;
        }
        case 1: {
          std::uint32_t value = reader.u32();
          FUZZ_CHECK(used + 4 <= body.size() && value == load<std::uint32_t>(body.data() + used));
          used += 4;
          break;
        }
        case 2: {
          std::uint64_t value = reader.u64();
          FUZZ_CHECK(used + 8 <= body.size() && value == load<std::uint64_t>(body.data() + used));
          used += 8;
          break;
        }
        case 3: {
          std::string text = reader.str();
          FUZZ_CHECK(used + 4 <= body.size());
          std::uint32_t announced = load<std::uint32_t>(body.data() + used);
          FUZZ_CHECK(text.size() == announced);
          FUZZ_CHECK(used + 4 + std::size_t{announced} <= body.size());
          FUZZ_CHECK(std::memcmp(text.data(), body.data() + used + 4, text.size()) == 0);
          used += 4 + text.size();
          break;
        }
      }
    }
  } catch (const std::runtime_error& error) {
    FUZZ_CHECK(std::string(error.what()) == "truncated control message");
    // A read that throws needed more than was left.
  }
  FUZZ_CHECK(used <= body.size());
}

// What the coordinator reads of a session's message (a mirror of coordinator.cc's
// on_message, on_hello and on_stall), with its checks.
void coordinator_reads(Input input) {
  auto type = static_cast<MessageType>(input.u8());
  ExactCopy body(input.rest(), input.left());
  if (body.size() > kMaxBodyToCoordinator) return;  // read_header closes such a session
  MessageReader reader(view(body));
  try {
    switch (type) {
      case MessageType::proof:
        (void)reader.u64();
        FUZZ_CHECK(body.size() >= 8);
        break;
      case MessageType::hello: {
        int pid = reader.i32();
        int requested = reader.i32();
        int os_pid = reader.i32();
        std::string address = reader.str();
        std::string machine = reader.str();
        (void)reader.u64();
        FUZZ_CHECK(12 + 4 + address.size() + 4 + machine.size() + 8 <= body.size());
        (void)pid, (void)requested, (void)os_pid;
        break;
      }
      case MessageType::stall: {
        (void)reader.i32();
        (void)reader.i32();
        std::uint32_t count = reader.u32();
        if (count > static_cast<std::uint32_t>(kProcesses))
          throw std::runtime_error("stall report names too many pids");
        std::vector<int> awaiting;
        for (std::uint32_t i = 0; i < count; ++i) {
          int other = reader.i32();
          if (other < 0 || other >= kProcesses) throw std::runtime_error("stall report names a pid out of range");
          awaiting.push_back(other);
        }
        FUZZ_CHECK(12 + 4 * awaiting.size() <= body.size());
        break;
      }
      case MessageType::done:
      case MessageType::abort: {
        std::string text = reader.str();
        FUZZ_CHECK(4 + text.size() <= body.size());
        break;
      }
      default:
        break;
    }
  } catch (const std::exception&) {
    // The coordinator prints "bad control message" and goes on.
  }
}

// What a process reads of `start` (a mirror of control_client.cc).
void start_reads(Input input) {
  ExactCopy body(input.rest(), input.left());
  MessageReader reader(view(body));
  try {
    int nprocs = reader.i32();
    (void)reader.u32();
    std::vector<std::string> addresses;
    std::size_t bytes = 8;
    for (int i = 0; i < nprocs; ++i) {
      addresses.push_back(reader.str());
      bytes += 4 + addresses.back().size();
      FUZZ_CHECK(bytes <= body.size());
    }
    std::vector<std::string> machines;
    for (int i = 0; i < nprocs; ++i) {
      machines.push_back(reader.str());
      bytes += 4 + machines.back().size();
      FUZZ_CHECK(bytes <= body.size());
    }
    FUZZ_CHECK(addresses.size() + machines.size() <= body.size() / 4);
    for (int i = 0; i < nprocs; ++i) {
      (void)reader.i32();
      (void)reader.u64();
      bytes += 12;
      FUZZ_CHECK(bytes <= body.size());
    }
  } catch (const std::exception&) {
  }
}

void write_then_read(Input input) {
  auto type = static_cast<MessageType>(input.u8());
  MessageWriter writer(type);
  struct Value {
    int op;
    std::uint64_t number;
    std::string text;
  };
  std::vector<Value> values;
  while (input.left() > 0 && values.size() < 64) {
    Value value{input.u8() % 4, 0, {}};
    switch (value.op) {
      case 0:
        value.number = input.u32();
        writer.i32(static_cast<std::int32_t>(value.number));
        break;
      case 1:
        value.number = input.u32();
        writer.u32(static_cast<std::uint32_t>(value.number));
        break;
      case 2:
        value.number = input.u32() | (std::uint64_t{input.u32()} << 32);
        writer.u64(value.number);
        break;
      case 3: {
        std::vector<std::uint8_t> bytes = input.take(input.u8());
        value.text.assign(bytes.begin(), bytes.end());
        writer.str(value.text);
        break;
      }
    }
    values.push_back(std::move(value));
  }
  std::string message = writer.bytes();
  FUZZ_CHECK(message.size() >= kFrameHeader);
  FUZZ_CHECK(load<std::uint32_t>(reinterpret_cast<const std::byte*>(message.data())) == message.size() - kFrameHeader);
  FUZZ_CHECK(static_cast<std::uint8_t>(message[4]) == static_cast<std::uint8_t>(type));
  ExactCopy body(message.data() + kFrameHeader, message.size() - kFrameHeader);
  MessageReader reader(view(body));
  for (const Value& value : values) {
    switch (value.op) {
      case 0:
        FUZZ_CHECK(reader.i32() == static_cast<std::int32_t>(value.number));
        break;
      case 1:
        FUZZ_CHECK(reader.u32() == static_cast<std::uint32_t>(value.number));
        break;
      case 2:
        FUZZ_CHECK(reader.u64() == value.number);
        break;
      case 3:
        FUZZ_CHECK(reader.str() == value.text);
        break;
    }
  }
  bool threw = false;
  try {
    (void)reader.i32();  // nothing is left: must throw rather than read past the body
  } catch (const std::runtime_error&) {
    threw = true;
  }
  FUZZ_CHECK(threw);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  Input input(data + 1, size - 1);
  switch (data[0] % 4) {
    case 0:
      read_program(input);
      break;
    case 1:
      coordinator_reads(input);
      break;
    case 2:
      start_reads(input);
      break;
    case 3:
      write_then_read(input);
      break;
  }
  return 0;
}

std::vector<std::vector<std::uint8_t>> fuzz_seeds() {
  std::vector<std::vector<std::uint8_t>> seeds;
  auto message = [&](std::uint8_t mode, std::vector<std::uint8_t> prefix, MessageWriter writer) {
    std::string bytes = writer.bytes();
    std::vector<std::uint8_t> seed{mode};
    seed.insert(seed.end(), prefix.begin(), prefix.end());
    seed.insert(seed.end(), bytes.begin() + kFrameHeader, bytes.end());
    seeds.push_back(std::move(seed));
  };
  // Read programs: (count, op bits...) then a body.
  message(0, {4, 0b11100100}, MessageWriter(MessageType::hello).i32(1).u32(2).u64(3).str("127.0.0.1:4000"));
  message(0, {3, 0b111111}, MessageWriter(MessageType::hello).str("a").str("").str("bcd"));
  // The coordinator's messages.
  message(1, {9}, MessageWriter(MessageType::proof).u64(0x0123456789ABCDEFull));
  message(1, {1},
          MessageWriter(MessageType::hello)
              .i32(0)
              .i32(4)
              .i32(1234)
              .str("127.0.0.1:40000")
              .str("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0")
              .u64(987654));
  message(1, {7}, MessageWriter(MessageType::stall).i32(12).i32(10500).u32(2).i32(1).i32(3));
  message(1, {5}, MessageWriter(MessageType::done).str("supersteps=3 comm_s=0.1 foreign=0"));
  message(1, {4}, MessageWriter(MessageType::abort).str("bsplib: pid 1: something went wrong"));
  // start.
  message(2, {},
          MessageWriter(MessageType::start)
              .i32(3)
              .u32(77)
              .str("127.0.0.1:1")
              .str("127.0.0.1:2")
              .str("lo/00:00:00:00:00:00")
              .str("boot-a")
              .str("boot-a")
              .str("boot-b")
              .i32(4242)
              .u64(987654)
              .i32(4243)
              .u64(987655)
              .i32(77)
              .u64(12));
  // Writer programs.
  seeds.push_back({3, 1, 0, 1, 2, 3, 4, 3, 5, 'h', 'e', 'l', 'l', 'o', 2, 8, 7, 6, 5, 4, 3, 2, 1});
  seeds.push_back({3, 4, 3, 0, 1, 0xFF, 0xFF, 0xFF, 0xFF});
  return seeds;
}
