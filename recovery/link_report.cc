// recovery/link_report.cc: encoding and decoding of the ack/nack/probe payload.
#include "recovery/link_report.h"

#include <cstring>

namespace bsp::recovery {
namespace {

template <typename T>
void put(std::span<std::byte> out, std::size_t at, T value) {
  std::memcpy(out.data() + at, &value, sizeof(T));
}

template <typename T>
T get(std::span<const std::byte> in, std::size_t at) {
  T value;
  std::memcpy(&value, in.data() + at, sizeof(T));
  return value;
}

}  // namespace

std::size_t encode_report(const LinkReport& report, std::span<std::byte> out) {
  put<std::uint32_t>(out, 0, report.received_end);
  put<std::uint32_t>(out, 4, report.sent_end);
  put<std::uint32_t>(out, 8, report.echo);
  put<std::uint16_t>(out, 12, 0);
  put<std::uint16_t>(out, 14, static_cast<std::uint16_t>(report.missing.size()));
  std::size_t at = kReportHeadSize;
  for (const SeqRange& range : report.missing) {
    put<std::uint32_t>(out, at, range.begin);
    put<std::uint32_t>(out, at + 4, range.end);
    at += kReportRangeSize;
  }
  return at;
}

std::optional<LinkReport> decode_report(std::span<const std::byte> payload) {
  if (payload.size() < kReportHeadSize) return std::nullopt;
  LinkReport report;
  report.received_end = get<std::uint32_t>(payload, 0);
  report.sent_end = get<std::uint32_t>(payload, 4);
  report.echo = get<std::uint32_t>(payload, 8);
  std::size_t count = get<std::uint16_t>(payload, 14);
  if (payload.size() != report_size(count)) return std::nullopt;
  report.missing.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    std::size_t at = kReportHeadSize + i * kReportRangeSize;
    SeqRange range{get<std::uint32_t>(payload, at), get<std::uint32_t>(payload, at + 4)};
    if (static_cast<std::int32_t>(range.end - range.begin) <= 0) return std::nullopt;
    report.missing.push_back(range);
  }
  return report;
}

}  // namespace bsp::recovery
