// tests/fuzz/link_report_fuzz.cc: recovery::decode_report (recovery/link_report.h), the
// payload of every ack, nack and probe.
//
// Input: byte 0 = mode; mode % 2 == 0: the rest is a payload, decoded; odd: the rest
// describes a report that is encoded, then decoded.
// Checked: a decoded report's size is exactly report_size(ranges); every range is
// non-empty (end - begin > 0 in serial arithmetic, as the decoder promises); encoding the
// decoded report gives back the payload (but the reserved u16, which encode writes as 0);
// whatever encode_report writes decodes to the same report when its ranges are valid.
// Payloads are in heap blocks of their exact size.
#include <cstdint>
#include <cstring>
#include <vector>

#include "recovery/link_report.h"
#include "tests/fuzz/fuzz_target.h"

namespace {

using namespace bsp::recovery;
using bsp::fuzz::ExactCopy;
using bsp::fuzz::Input;

bool same(const LinkReport& a, const LinkReport& b) {
  if (a.received_end != b.received_end || a.sent_end != b.sent_end || a.echo != b.echo ||
      a.missing.size() != b.missing.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.missing.size(); ++i) {
    if (a.missing[i].begin != b.missing[i].begin || a.missing[i].end != b.missing[i].end) return false;
  }
  return true;
}

void decode(const std::uint8_t* data, std::size_t size) {
  ExactCopy payload(data, size);
  std::optional<LinkReport> report = decode_report({payload.data(), payload.size()});
  if (!report) return;
  FUZZ_CHECK(size == report_size(report->missing.size()));
  FUZZ_CHECK(report->missing.size() <= 0xFFFF);
  for (const SeqRange& range : report->missing) {
    FUZZ_CHECK(static_cast<std::int32_t>(range.end - range.begin) > 0);
  }
  std::vector<std::byte> again(report_size(report->missing.size()));
  FUZZ_CHECK(encode_report(*report, again) == size);
  std::vector<std::uint8_t> expected(data, data + size);
  expected[12] = expected[13] = 0;  // reserved
  FUZZ_CHECK(std::memcmp(again.data(), expected.data(), size) == 0);
}

void encode_then_decode(Input input) {
  LinkReport report;
  report.received_end = input.u32();
  report.sent_end = input.u32();
  report.echo = input.u32();
  bool valid = true;
  while (input.left() >= 8 && report.missing.size() < 2000) {
    SeqRange range{input.u32(), input.u32()};
    valid = valid && static_cast<std::int32_t>(range.end - range.begin) > 0;
    report.missing.push_back(range);
  }
  std::vector<std::byte> out(report_size(report.missing.size()));
  std::size_t written = encode_report(report, out);
  FUZZ_CHECK(written == out.size());
  ExactCopy payload(out.data(), out.size());
  std::optional<LinkReport> back = decode_report({payload.data(), payload.size()});
  FUZZ_CHECK(back.has_value() == valid);
  if (back) FUZZ_CHECK(same(*back, report));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  if (data[0] % 2 == 0) {
    decode(data + 1, size - 1);
  } else {
    encode_then_decode(Input(data + 1, size - 1));
  }
  return 0;
}

std::vector<std::vector<std::uint8_t>> fuzz_seeds() {
  std::vector<std::vector<std::uint8_t>> seeds;
  auto encoded = [&](const LinkReport& report) {
    std::vector<std::byte> out(report_size(report.missing.size()));
    encode_report(report, out);
    std::vector<std::uint8_t> seed{0};
    for (std::byte b : out) seed.push_back(static_cast<std::uint8_t>(b));
    seeds.push_back(seed);
    seed[0] = 1;                                       // the same bytes as an encode program
    seed.erase(seed.begin() + 13, seed.begin() + 17);  // (no reserved/count there)
    seeds.push_back(std::move(seed));
  };
  encoded(LinkReport{});
  encoded(LinkReport{10, 12, 0, {{3, 5}}});
  encoded(LinkReport{1000000, 1000010, 77, {{999990, 999995}, {999996, 1000000}, {0xFFFFFFF0u, 5}}});
  LinkReport many{500, 600, 1, {}};
  for (std::uint32_t i = 0; i < 40; ++i) many.missing.push_back({i * 10, i * 10 + 3});
  encoded(many);
  return seeds;
}
