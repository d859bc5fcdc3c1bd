// transport/option_spec.h: a transport's settings, declared once. A transport lists its
// options (TransportOption: name, default as shown, help, kind and limits) with its factory
// (registry.h); bsprun's option table prints them and checks every value against its spec
// at parse time. The transport then reads them through TransportOptions, with one rule:
// an empty value means the option is unset.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bsp::transport {

struct TransportOption {
  enum class Kind { number, text, one_of };
  std::string name;          // as typed: --NAME=VALUE, BSP_NAME ('-' -> '_')
  std::string default_text;  // as shown to users ("": none)
  std::string help;          // one line, limits included
  Kind kind = Kind::text;
  long low = 0, high = 0;            // number: the accepted range
  std::vector<std::string> choices;  // one_of: the accepted values
  // A knob for tests, set in TransportConfig::options directly: not shown by bsprun, not
  // taken from the command line or the environment.
  bool internal = false;

  // The key in TransportConfig::options: the name with '-' as '_'.
  std::string key() const;
  // Throws std::runtime_error naming variable (BSP_NAME), the value and what is accepted.
  void check(const std::string& variable, const std::string& value) const;
};

TransportOption number_option(std::string name, std::string default_text, std::string help, long low, long high);
TransportOption text_option(std::string name, std::string default_text, std::string help);
TransportOption one_of_option(std::string name, std::string default_text, std::string help,
                              std::vector<std::string> choices);
TransportOption internal_option(std::string name, std::string help);

// A transport's view of TransportConfig::options through its declared specs. An option
// asked for that the transport did not declare is a programming error (std::logic_error);
// a value that is no whole number where one is wanted (only possible when options are set
// without bsprun's table) is a std::runtime_error naming the transport and the option.
class TransportOptions {
 public:
  TransportOptions(std::string transport, const std::map<std::string, std::string>& values,
                   const std::vector<TransportOption>& specs);

  // The value; nullopt when the option is absent or empty.
  std::optional<std::string> text(std::string_view name) const;
  std::string text(std::string_view name, const std::string& fallback) const;
  std::optional<long> number(std::string_view name) const;
  long number(std::string_view name, long fallback) const;

 private:
  const TransportOption& spec(std::string_view name) const;

  std::string transport_;
  const std::map<std::string, std::string>& values_;
  const std::vector<TransportOption>& specs_;
};

}  // namespace bsp::transport
