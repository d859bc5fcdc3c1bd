// experiments/mac_cost.cc: what authenticating frames costs: sealing (the nested MAC of
// recovery/frame_codec.h, NH joined by SipHash-2-4 on long payloads, and the check over the
// pass's fold) and checking one frame, by frame size, next to a CRC32C of the whole frame
// (what sealing cost before frames carried a MAC, and the second pass it took until the
// check moved onto the fold).
// Run: bazel run -c opt //experiments:mac_cost
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "recovery/crc32c.h"
#include "recovery/frame_codec.h"

namespace {

using namespace bsp;

std::vector<std::byte> frame_of(std::size_t payload) {
  std::vector<std::byte> frame(wire::kHeaderSize + payload, std::byte{0x42});
  wire::Header header{};
  header.type = static_cast<std::uint8_t>(wire::FrameType::data);
  header.job_id = 7;
  header.src = 0;
  header.dst = 1;
  std::memcpy(frame.data(), &header, wire::kHeaderSize);
  return frame;
}

const wire::FrameKey& key() {
  static const wire::FrameKey k = wire::frame_key(auth::Key{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});
  return k;
}

void Seal(benchmark::State& state) {
  auto frame = frame_of(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) {
    wire::seal_frame(frame, key());
    benchmark::DoNotOptimize(frame.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(frame.size()));
}

void Check(benchmark::State& state) {
  auto frame = frame_of(static_cast<std::size_t>(state.range(0)));
  wire::seal_frame(frame, key());
  wire::Header header;
  for (auto _ : state) {
    benchmark::DoNotOptimize(wire::check_frame(frame, key(), 7, 1, 2, header));
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(frame.size()));
}

void CrcOnly(benchmark::State& state) {
  auto frame = frame_of(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(crc32c(frame));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(frame.size()));
}

// The payload MAC alone: plain SipHash-2-4 (libsodium, what frames used first) against
// the MAC frames use now (auth/bulk_mac.h: NH, then SipHash).
void SipHashOnly(benchmark::State& state) {
  std::vector<std::byte> payload(static_cast<std::size_t>(state.range(0)), std::byte{0x42});
  for (auto _ : state) benchmark::DoNotOptimize(auth::mac(auth::Key{}, {payload}));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0));
}

void PayloadMacOnly(benchmark::State& state) {
  std::vector<std::byte> payload(static_cast<std::size_t>(state.range(0)), std::byte{0x42});
  for (auto _ : state) benchmark::DoNotOptimize(auth::bulk_mac(key().payload, payload));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0));
}

// The sender's pass on a bulk put: 65,000-byte pieces of an 8 MiB source copied into a
// pool as large (copy_payload: the copy, MAC and fold in one pass), against memcpy alone.
constexpr std::size_t kSource = 8 << 20;
constexpr std::size_t kPiece = 65000;

template <bool kSealed>
void PoolCopy(benchmark::State& state) {
  std::vector<std::byte> source(kSource, std::byte{0x42});
  std::vector<std::byte> pool(kSource + kPiece);
  for (auto _ : state) {
    for (std::size_t at = 0; at + kPiece <= kSource; at += kPiece) {
      if constexpr (kSealed) {
        benchmark::DoNotOptimize(wire::copy_payload(pool.data() + at, {source.data() + at, kPiece}, key()));
      } else {
        std::memcpy(pool.data() + at, source.data() + at, kPiece);
      }
    }
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(kSource / kPiece * kPiece));
}

BENCHMARK(PoolCopy<true>);
BENCHMARK(PoolCopy<false>);
BENCHMARK(SipHashOnly)->Arg(1400)->Arg(8152)->Arg(65000);
BENCHMARK(PayloadMacOnly)->Arg(127)->Arg(128)->Arg(1400)->Arg(8152)->Arg(65000);
BENCHMARK(Seal)->Arg(4)->Arg(64)->Arg(1400)->Arg(8152);
BENCHMARK(Check)->Arg(4)->Arg(64)->Arg(1400)->Arg(8152);
BENCHMARK(CrcOnly)->Arg(4)->Arg(64)->Arg(1400)->Arg(8152);

}  // namespace

BENCHMARK_MAIN();
