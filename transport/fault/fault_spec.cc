// transport/fault/fault_spec.cc: parsing "drop=0.05,dup=0.01,reorder=0.02,corrupt=0.001,seed=7".
#include <charconv>
#include <stdexcept>
#include <string>

#include "transport/fault/fault_transport.h"

namespace bsp::transport {
namespace {

[[noreturn]] void bad(std::string_view spec, const std::string& why) {
  throw std::runtime_error("fault spec '" + std::string(spec) + "': " + why +
                           " (want e.g. drop=0.05,dup=0.01,reorder=0.02,corrupt=0.001,seed=7)");
}

double rate(std::string_view spec, std::string_view key, std::string_view text) {
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(std::string(text), &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty()) bad(spec, std::string(key) + " is not a number");
  if (!(value >= 0 && value <= 1)) bad(spec, std::string(key) + " must be between 0 and 1");
  return value;
}

}  // namespace

FaultSpec parse_fault_spec(std::string_view spec) {
  FaultSpec parsed;
  std::string_view rest = spec;
  while (!rest.empty()) {
    std::size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    if (item.empty()) continue;
    std::size_t equals = item.find('=');
    if (equals == std::string_view::npos) bad(spec, "'" + std::string(item) + "' has no '='");
    std::string_view key = item.substr(0, equals);
    std::string_view value = item.substr(equals + 1);
    if (key == "drop") {
      parsed.drop = rate(spec, key, value);
    } else if (key == "dup") {
      parsed.dup = rate(spec, key, value);
    } else if (key == "reorder") {
      parsed.reorder = rate(spec, key, value);
    } else if (key == "corrupt") {
      parsed.corrupt = rate(spec, key, value);
    } else if (key == "seed") {
      auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), parsed.seed);
      if (error != std::errc() || end != value.data() + value.size() || value.empty()) {
        bad(spec, "seed is not a whole number");
      }
    } else {
      bad(spec, "unknown setting '" + std::string(key) + "' (known: drop, dup, reorder, corrupt, seed)");
    }
  }
  return parsed;
}

}  // namespace bsp::transport
