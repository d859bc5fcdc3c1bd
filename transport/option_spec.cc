// transport/option_spec.cc: checking a transport option's value against its spec, and the
// transports' accessor (option_spec.h).
#include "transport/option_spec.h"

#include <fmt/format.h>

#include <cstdlib>
#include <stdexcept>

namespace bsp::transport {
namespace {

std::optional<long> whole_number(const std::string& text) {
  char* end = nullptr;
  long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end) return std::nullopt;
  return value;
}

}  // namespace

std::string TransportOption::key() const {
  std::string key = name;
  for (char& c : key) c = c == '-' ? '_' : c;
  return key;
}

void TransportOption::check(const std::string& variable, const std::string& value) const {
  switch (kind) {
    case Kind::text:
      return;
    case Kind::number: {
      std::optional<long> number = whole_number(value);
      if (!number) throw std::runtime_error(fmt::format("{}={} is not a whole number", variable, value));
      if (*number < low || *number > high) {
        throw std::runtime_error(fmt::format("{}={} is out of range: from {} to {}", variable, value, low, high));
      }
      return;
    }
    case Kind::one_of:
      for (const std::string& choice : choices) {
        if (value == choice) return;
      }
      throw std::runtime_error(fmt::format("{}={} must be one of {}", variable, value, fmt::join(choices, ", ")));
  }
}

TransportOption number_option(std::string name, std::string default_text, std::string help, long low, long high) {
  return {
      std::move(name), std::move(default_text), std::move(help), TransportOption::Kind::number, low, high, {}, false};
}

TransportOption text_option(std::string name, std::string default_text, std::string help) {
  return {std::move(name), std::move(default_text), std::move(help), TransportOption::Kind::text, 0, 0, {}, false};
}

TransportOption one_of_option(std::string name, std::string default_text, std::string help,
                              std::vector<std::string> choices) {
  return {std::move(name),
          std::move(default_text),
          std::move(help),
          TransportOption::Kind::one_of,
          0,
          0,
          std::move(choices),
          false};
}

TransportOption internal_option(std::string name, std::string help) {
  TransportOption option = text_option(std::move(name), "", std::move(help));
  option.internal = true;
  return option;
}

TransportOptions::TransportOptions(std::string transport, const std::map<std::string, std::string>& values,
                                   const std::vector<TransportOption>& specs)
    : transport_(std::move(transport)), values_(values), specs_(specs) {}

const TransportOption& TransportOptions::spec(std::string_view name) const {
  for (const TransportOption& option : specs_) {
    if (option.name == name) return option;
  }
  throw std::logic_error(fmt::format("{} transport: reads option '{}', which it does not declare", transport_, name));
}

std::optional<std::string> TransportOptions::text(std::string_view name) const {
  auto found = values_.find(spec(name).key());
  if (found == values_.end() || found->second.empty()) return std::nullopt;
  return found->second;
}

std::string TransportOptions::text(std::string_view name, const std::string& fallback) const {
  return text(name).value_or(fallback);
}

std::optional<long> TransportOptions::number(std::string_view name) const {
  std::optional<std::string> value = text(name);
  if (!value) return std::nullopt;
  std::optional<long> number = whole_number(*value);
  if (!number) {
    throw std::runtime_error(fmt::format("{} transport: {}={} is not a whole number", transport_, name, *value));
  }
  return number;
}

long TransportOptions::number(std::string_view name, long fallback) const { return number(name).value_or(fallback); }

}  // namespace bsp::transport
