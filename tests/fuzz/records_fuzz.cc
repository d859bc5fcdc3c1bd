// tests/fuzz/records_fuzz.cc: the superstep record parser (bsplib/superstep_records.h:
// record_size and read_*), fed arbitrary streams the way bsplib/engine.cc's parse() walks
// them: record_size at the parse position, then read_* of the kind, then advance.
//
// Checked: record_size never announces more bytes than the stream holds from the parse
// position; a complete record's size is exactly what its read_* fields add up to; every
// byte a record points at (put and reply data, message tag and payload, end's pushes and
// pops, a strided run's data) lies inside the stream; a barrier record's body goes through the sparse
// protocol's DisseminationBarrier::receive, which refuses or takes it without reading
// outside it (each is read, in a heap block of the stream's exact size,
// so AddressSanitizer reports any read past it); parsing a stream that arrives in pieces
// gives the same records as parsing it whole (a piece never shows a different size, and
// "bad" never appears on a piece where the whole stream is good); records written with
// records::Writer (every kind, the sparse protocol's open, close, ack and barrier too, and
// runs combined by start_strided/extend_strided) read back field for field.
//
// Input: byte 0 selects the mode (mode % 4 == 3: write-then-read round trip; otherwise
// parse the rest as a stream, cut into pieces at offsets taken from byte 0).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "bsplib/dissemination_barrier.h"
#include "bsplib/superstep_records.h"
#include "tests/fuzz/fuzz_target.h"

namespace {

using namespace bsp::records;
using bsp::fuzz::ExactCopy;
using bsp::fuzz::Input;

struct Parsed {
  std::size_t pos = 0;
  std::size_t size = 0;
};

// Touches every byte of [at, at + size) (AddressSanitizer checks each read).
std::uint32_t touch(const std::byte* at, std::size_t size) {
  std::uint32_t sum = 0;
  for (std::size_t i = 0; i < size; ++i) sum = sum * 31 + static_cast<std::uint32_t>(at[i]);
  return sum;
}

volatile std::uint32_t g_sink;

// Walks the stream from 0 as the engine does; returns the complete records, and whether
// the walk stopped at a bad record.
std::vector<Parsed> walk(std::span<const std::byte> stream, bool& stopped_bad) {
  std::vector<Parsed> records;
  std::size_t pos = 0;
  stopped_bad = false;
  for (;;) {
    bool bad = false;
    std::size_t size = record_size(stream, pos, bad);
    if (bad) {
      FUZZ_CHECK(size == 0);
      stopped_bad = true;
      break;
    }
    if (size == 0) break;  // incomplete: waits for more bytes
    FUZZ_CHECK(pos < stream.size());
    FUZZ_CHECK(size <= stream.size() - pos);
    const std::byte* at = stream.data() + pos;
    switch (static_cast<Kind>(at[0])) {
      case Kind::put: {
        Put put = read_put(at, pos);
        FUZZ_CHECK(size == kPutHeader + std::size_t{put.size});
        FUZZ_CHECK(put.data_at == pos + kPutHeader);
        FUZZ_CHECK(put.data_at + put.size <= stream.size());
        g_sink = touch(stream.data() + put.data_at, put.size);
        break;
      }
      case Kind::put_strided: {
        StridedPut run = read_strided(at, pos);
        FUZZ_CHECK(run.size > 0 && run.count > 0);
        FUZZ_CHECK(std::uint64_t{run.size} * run.count <= kMaxStridedData);
        FUZZ_CHECK(size == kStridedHeader + std::size_t{run.size} * run.count);
        FUZZ_CHECK(run.data_at == pos + kStridedHeader);
        FUZZ_CHECK(run.data_at + std::size_t{run.size} * run.count <= stream.size());
        FUZZ_CHECK(run.extent() >= run.size);
        g_sink = touch(stream.data() + run.data_at, std::size_t{run.size} * run.count);
        break;
      }
      case Kind::get_request: {
        FUZZ_CHECK(size == kGetRequestSize);
        GetRequest request = read_get_request(at);
        g_sink = request.registration ^ request.offset ^ request.size ^ request.request_id;
        break;
      }
      case Kind::get_reply: {
        GetReply reply = read_get_reply(at, pos);
        FUZZ_CHECK(size == kGetReplyHeader + std::size_t{reply.size});
        FUZZ_CHECK(reply.data_at == pos + kGetReplyHeader);
        FUZZ_CHECK(reply.data_at + reply.size <= stream.size());
        g_sink = touch(stream.data() + reply.data_at, reply.size);
        break;
      }
      case Kind::queue_message: {
        QueueMessage message = read_queue_message(at, pos);
        FUZZ_CHECK(message.queue < kMaxQueues);
        FUZZ_CHECK(size == kQueueMessageHeader + std::size_t{message.payload_size});
        FUZZ_CHECK(message.payload_at + message.payload_size <= stream.size());
        g_sink = touch(stream.data() + message.payload_at, message.payload_size);
        break;
      }
      case Kind::message: {
        Message message = read_message(at, pos);
        FUZZ_CHECK(size == kMessageHeader + std::size_t{message.tag_size} + message.payload_size);
        FUZZ_CHECK(message.tag_at == pos + kMessageHeader);
        FUZZ_CHECK(message.tag_at + message.tag_size + message.payload_size <= stream.size());
        g_sink = touch(stream.data() + message.tag_at, std::size_t{message.tag_size} + message.payload_size);
        break;
      }
      case Kind::end: {
        End end = read_end(at);
        FUZZ_CHECK(end.pushes.size() <= kMaxRegistrationChanges);
        FUZZ_CHECK(end.pops.size() <= kMaxRegistrationChanges);
        FUZZ_CHECK(size == kEndHeader + end.pushes.size() * kEndPush + 4 + end.pops.size() * kEndPop);
        break;
      }
      case Kind::put_pulled: {
        FUZZ_CHECK(size == kPulledSize);
        Put put = read_put_pulled(at);
        FUZZ_CHECK(put.pulled);
        g_sink = put.registration ^ put.offset ^ put.size ^ static_cast<std::uint32_t>(put.token);
        break;
      }
      case Kind::get_reply_pulled: {
        FUZZ_CHECK(size == kPulledSize);
        GetReply reply = read_get_reply_pulled(at);
        FUZZ_CHECK(reply.pulled);
        g_sink = reply.request_id ^ reply.piece_offset ^ reply.size ^ static_cast<std::uint32_t>(reply.token);
        break;
      }
      case Kind::open:
      case Kind::ack:
        FUZZ_CHECK(size == kOpenSize);
        g_sink = read_u32(at + 1);
        break;
      case Kind::close:
        FUZZ_CHECK(size == kCloseSize);
        g_sink = read_u32(at + 1) ^ read_u32(at + 5);
        break;
      case Kind::barrier: {
        FUZZ_CHECK(size == kBarrierHeader + std::size_t{read_u32(at + 1)});
        // The body as the sparse protocol takes it: refused or taken, never read outside.
        std::span<const std::byte> body{at + kBarrierHeader, size - kBarrierHeader};
        std::optional<std::uint32_t> superstep = bsp::DisseminationBarrier::superstep_of(body);
        bsp::DisseminationBarrier barrier(static_cast<int>(g_sink % 64) + 1, 70);
        barrier.start(superstep.value_or(0), {}, {});
        std::string wrong = barrier.receive(static_cast<int>(body.size() % 70), body);
        g_sink = static_cast<std::uint32_t>(wrong.size());
        break;
      }
      default:
        FUZZ_CHECK(!"record_size accepted an unknown kind");
    }
    records.push_back({pos, size});
    pos += size;
  }
  return records;
}

void parse_stream(std::uint8_t mode, const std::uint8_t* data, std::size_t size) {
  ExactCopy whole(data, size);
  bool whole_bad = false;
  std::vector<Parsed> records = walk({whole.data(), whole.size()}, whole_bad);
  // The same stream arriving in pieces: each prefix is a stream of its own (exact-size
  // copy), as the engine holds it between arrivals.
  std::size_t pieces = 1 + (mode >> 2) % 6;
  for (std::size_t piece = 1; piece < pieces && size > 0; ++piece) {
    std::size_t cut = size * piece / pieces + ((mode >> 5) & 1);
    cut = std::min(cut, size);
    ExactCopy prefix(data, cut);
    bool prefix_bad = false;
    std::vector<Parsed> early = walk({prefix.data(), prefix.size()}, prefix_bad);
    FUZZ_CHECK(early.size() <= records.size());
    for (std::size_t i = 0; i < early.size(); ++i) {
      FUZZ_CHECK(early[i].pos == records[i].pos);
      FUZZ_CHECK(early[i].size == records[i].size);
    }
    // A piece is bad only where the whole stream is bad, at the same record.
    if (prefix_bad) FUZZ_CHECK(whole_bad && early.size() == records.size());
  }
}

// Writes records chosen by the input with records::Writer, then reads them back.
void round_trip(Input input) {
  struct Expected {
    Kind kind;
    std::uint32_t a = 0, b = 0, c = 0, d = 0;
    std::uint64_t token = 0;
    std::vector<std::uint8_t> data, data2;
    End end;
  };
  bsp::ByteStream out;
  Writer writer(out);
  std::vector<Expected> expected;
  while (input.left() > 0 && expected.size() < 64) {
    Expected e;
    std::uint8_t choice = input.u8();
    // Every kind: the dense protocol's, the sparse one's (open, close, ack, barrier) and runs.
    unsigned pick = choice % 13u;
    e.kind = pick == 11 ? Kind::put_strided : pick == 12 ? Kind::queue_message : static_cast<Kind>(1 + pick);
    switch (e.kind) {
      case Kind::put_strided: {
        // A put record turned into a run by a second put one stride further, then grown
        // (as the engine does for puts of one size at equal steps).
        e.a = input.u32(), e.b = input.u32(), e.c = 1 + input.u8() % 24, e.d = input.u32();
        e.data = input.take(e.c);
        if (e.data.size() != e.c) e.data.resize(e.c, 0xA5);
        writer.put(e.a, e.b, e.data.data(), e.c);
        std::size_t at = out.size() - kPutHeader - e.c;
        int count = 2 + input.u8() % 6;
        for (int k = 1; k < count; ++k) {
          std::vector<std::uint8_t> next = input.take(e.c);
          next.resize(e.c, static_cast<std::uint8_t>(k));
          if (k == 1) {
            start_strided(out, at, e.d, next.data(), e.c);
          } else {
            extend_strided(out, at, next.data(), e.c);
          }
          e.data.insert(e.data.end(), next.begin(), next.end());
        }
        e.token = static_cast<std::uint64_t>(count);
        break;
      }
      case Kind::put: {
        e.a = input.u32(), e.b = input.u32();
        e.data = input.take(input.u8());
        writer.put(e.a, e.b, e.data.data(), static_cast<std::uint32_t>(e.data.size()));
        // Combined puts (-fcombine-puts): more data appended to the record just written.
        for (int more = input.u8() % 4; more > 0 && input.left() > 0; --more) {
          std::size_t at = out.size() - kPutHeader - e.data.size();
          std::vector<std::uint8_t> extra = input.take(input.u8());
          extend_put(out, at, extra.data(), static_cast<std::uint32_t>(extra.size()));
          e.data.insert(e.data.end(), extra.begin(), extra.end());
        }
        break;
      }
      case Kind::get_request:
        e.a = input.u32(), e.b = input.u32(), e.c = input.u32(), e.d = input.u32();
        writer.get_request(e.a, e.b, e.c, e.d);
        break;
      case Kind::get_reply:
        e.a = input.u32(), e.b = input.u32();
        e.data = input.take(input.u8());
        writer.get_reply(e.a, e.b, e.data.data(), static_cast<std::uint32_t>(e.data.size()));
        break;
      case Kind::queue_message: {
        // A C++ queue message written in two pieces, as bsp::queue sends a tuple.
        e.a = input.u32() % kMaxQueues;
        e.data = input.take(input.u8());
        std::size_t half = e.data.size() / 2;
        Piece pieces[2] = {{e.data.data(), half}, {e.data.data() + half, e.data.size() - half}};
        writer.queue_message(e.a, pieces, 2, static_cast<std::uint32_t>(e.data.size()));
        break;
      }
      case Kind::message:
        e.data = input.take(input.u8() % 16);
        e.data2 = input.take(input.u8());
        writer.message(e.data.data(), static_cast<std::uint32_t>(e.data.size()), e.data2.data(),
                       static_cast<std::uint32_t>(e.data2.size()));
        break;
      case Kind::put_pulled:
        e.a = input.u32(), e.b = input.u32(), e.c = input.u32(), e.token = input.u32() * 0x100000003ull;
        writer.put_pulled(e.a, e.b, e.c, e.token);
        break;
      case Kind::get_reply_pulled:
        e.a = input.u32(), e.b = input.u32(), e.c = input.u32(), e.token = input.u32() * 0x100000007ull;
        writer.get_reply_pulled(e.a, e.b, e.c, e.token);
        break;
      case Kind::open:
        e.a = input.u32();
        writer.open(e.a);
        break;
      case Kind::close:
        e.a = input.u32(), e.b = input.u32();
        writer.close(e.a, e.b);
        break;
      case Kind::ack:
        e.a = input.u32();
        writer.ack(e.a);
        break;
      case Kind::barrier: {
        e.data = input.take(input.u8());
        std::vector<std::byte> body(e.data.size());
        if (!body.empty()) std::memcpy(body.data(), e.data.data(), body.size());
        writer.barrier(body);
        break;
      }
      case Kind::end: {
        e.end.superstep = input.u32();
        e.end.flags = input.u8();
        e.end.next_tagsize = input.u32();
        e.end.get_requests = input.u32();
        for (int n = input.u8() % 8; n > 0; --n) e.end.pushes.push_back(input.u32() * 0x100000001ull);
        for (int n = input.u8() % 8; n > 0; --n) e.end.pops.push_back({input.u32(), (input.u8() & 1) != 0});
        writer.end(e.end);
        break;
      }
    }
    expected.push_back(std::move(e));
  }
  ExactCopy stream(out.data(), out.size());
  bool bad = false;
  std::vector<Parsed> records = walk({stream.data(), stream.size()}, bad);
  FUZZ_CHECK(!bad);
  FUZZ_CHECK(records.size() == expected.size());
  std::size_t total = 0;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const Expected& e = expected[i];
    const std::byte* at = stream.data() + records[i].pos;
    FUZZ_CHECK(static_cast<Kind>(at[0]) == e.kind);
    auto same = [&](std::size_t from, const std::vector<std::uint8_t>& bytes) {
      return bytes.empty() || std::memcmp(stream.data() + from, bytes.data(), bytes.size()) == 0;
    };
    switch (e.kind) {
      case Kind::put: {
        Put put = read_put(at, records[i].pos);
        FUZZ_CHECK(put.registration == e.a && put.offset == e.b && put.size == e.data.size());
        FUZZ_CHECK(same(put.data_at, e.data));
        break;
      }
      case Kind::put_strided: {
        StridedPut run = read_strided(at, records[i].pos);
        FUZZ_CHECK(run.registration == e.a && run.offset == e.b && run.size == e.c && run.stride == e.d &&
                   run.count == e.token);
        FUZZ_CHECK(std::size_t{run.size} * run.count == e.data.size());
        FUZZ_CHECK(same(run.data_at, e.data));
        break;
      }
      case Kind::get_request: {
        GetRequest request = read_get_request(at);
        FUZZ_CHECK(request.registration == e.a && request.offset == e.b && request.size == e.c &&
                   request.request_id == e.d);
        break;
      }
      case Kind::get_reply: {
        GetReply reply = read_get_reply(at, records[i].pos);
        FUZZ_CHECK(reply.request_id == e.a && reply.piece_offset == e.b && reply.size == e.data.size());
        FUZZ_CHECK(same(reply.data_at, e.data));
        break;
      }
      case Kind::queue_message: {
        QueueMessage message = read_queue_message(at, records[i].pos);
        FUZZ_CHECK(message.queue == e.a && message.payload_size == e.data.size());
        FUZZ_CHECK(same(message.payload_at, e.data));
        break;
      }
      case Kind::message: {
        Message message = read_message(at, records[i].pos);
        FUZZ_CHECK(message.tag_size == e.data.size() && message.payload_size == e.data2.size());
        FUZZ_CHECK(same(message.tag_at, e.data) && same(message.tag_at + message.tag_size, e.data2));
        break;
      }
      case Kind::put_pulled: {
        Put put = read_put_pulled(at);
        FUZZ_CHECK(put.pulled && put.registration == e.a && put.offset == e.b && put.size == e.c &&
                   put.token == e.token);
        break;
      }
      case Kind::get_reply_pulled: {
        GetReply reply = read_get_reply_pulled(at);
        FUZZ_CHECK(reply.pulled && reply.request_id == e.a && reply.piece_offset == e.b && reply.size == e.c &&
                   reply.token == e.token);
        break;
      }
      case Kind::open:
      case Kind::ack:
        FUZZ_CHECK(records[i].size == kOpenSize && read_u32(at + 1) == e.a);
        break;
      case Kind::close:
        FUZZ_CHECK(records[i].size == kCloseSize && read_u32(at + 1) == e.a && read_u32(at + 5) == e.b);
        break;
      case Kind::barrier:
        FUZZ_CHECK(records[i].size == kBarrierHeader + e.data.size() && read_u32(at + 1) == e.data.size());
        FUZZ_CHECK(same(records[i].pos + kBarrierHeader, e.data));
        break;
      case Kind::end: {
        End end = read_end(at);
        FUZZ_CHECK(end.superstep == e.end.superstep && end.flags == e.end.flags &&
                   end.next_tagsize == e.end.next_tagsize && end.get_requests == e.end.get_requests);
        FUZZ_CHECK(end.pushes == e.end.pushes);
        FUZZ_CHECK(end.pops.size() == e.end.pops.size());
        for (std::size_t p = 0; p < end.pops.size(); ++p) {
          FUZZ_CHECK(end.pops[p].registration == e.end.pops[p].registration &&
                     end.pops[p].ambiguous == e.end.pops[p].ambiguous);
        }
        break;
      }
    }
    total += records[i].size;
  }
  FUZZ_CHECK(total == stream.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::uint8_t mode = data[0];
  if (mode % 4 == 3) {
    round_trip(Input(data + 1, size - 1));
  } else {
    parse_stream(mode, data + 1, size - 1);
  }
  return 0;
}

std::vector<std::vector<std::uint8_t>> fuzz_seeds() {
  std::vector<std::vector<std::uint8_t>> seeds;
  auto stream_seed = [&](std::uint8_t mode, auto&& write) {
    bsp::ByteStream out;
    Writer writer(out);
    write(writer);
    std::vector<std::uint8_t> seed{mode};
    for (std::size_t i = 0; i < out.size(); ++i) seed.push_back(static_cast<std::uint8_t>(out.data()[i]));
    seeds.push_back(std::move(seed));
  };
  const char text[] = "0123456789abcdefghijklmnopqrstuvwxyz";
  stream_seed(0, [&](Writer& w) { w.put(0, 4, text, 16); });
  stream_seed(4, [&](Writer& w) {
    w.put(1, 0, text, 8);
    w.get_request(2, 8, 32, 7);
    w.message(text, 4, text + 4, 20);
    w.end(End{3, 0, 4, 1, {64, 0, 1u << 20}, {{0, false}, {5, true}}});
    w.get_reply(7, 0, text, 32);
  });
  stream_seed(8, [&](Writer& w) { w.end(End{0, 1, 0, 0, {}, {}}); });
  stream_seed(20, [&](Writer& w) {
    for (int i = 0; i < 6; ++i) w.put(static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(4 * i), text, 4);
    w.message(nullptr, 0, text, 0);
    w.end(End{99, 0, 0, 0, {8}, {}});
  });
  stream_seed(24, [&](Writer& w) {  // a strided run (bspbench's h-relation at p = 2), then an end
    w.put(0, 8, text, 8);
    start_strided(w.stream(), 0, 16, text + 8, 8);
    for (int k = 2; k < 4; ++k) extend_strided(w.stream(), 0, text + 8 * k, 8);
    w.end(End{1, 0, 0, 0, {}, {}});
  });
  stream_seed(28, [&](Writer& w) {  // a sparse superstep's records from one peer, then the barrier
    w.open(4);
    w.put(0, 0, text, 8);
    w.get_request(1, 0, 8, 0);
    w.close(4, 1);
    w.ack(4);
    const std::byte body[12] = {std::byte{4}, std::byte{0}, std::byte{0}, std::byte{0}, std::byte{1}};
    w.barrier(body);
  });
  // Round-trip programs.
  seeds.push_back(
      {3, 1, 0, 0, 0, 0, 4, 0, 0, 0, 3, 'a', 'b', 'c', 5, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 1, 2});
  seeds.push_back({3, 11, 1, 0, 0, 0, 8, 0, 0, 0, 7, 16, 0, 0, 0, 'a', 'b', 'c', 'd', 'e', 'f', 'g', 3});
  // The sparse protocol's: open 5, close 5 (2 get requests), ack 5, a 6-byte barrier body.
  seeds.push_back({3, 7, 5, 0, 0, 0, 8, 5, 0, 0, 0, 2, 0, 0, 0, 9, 5, 0, 0, 0, 10, 6, 1, 2, 3, 4, 5, 6});
  seeds.push_back({7, 4, 2, 'x', 'y', 3, 'p', 'q', 'r', 2, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});
  return seeds;
}
