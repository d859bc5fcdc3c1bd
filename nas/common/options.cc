// nas/common/options.cc: parsing of the NAS kernels' command line (see options.h).
#include "nas/common/options.h"

#include <cctype>
#include <string>

#include "bsplib/bsp.h"

namespace nas {

std::string NpbOptions::get(const std::string& name, const std::string& fallback) const {
  auto found = extra.find(name);
  return found == extra.end() ? fallback : found->second;
}

namespace {

[[noreturn]] void usage_error(const std::string& benchmark, const std::string& classes,
                              const std::vector<std::string>& extra_names, const std::string& problem) {
  std::string usage = "usage: " + benchmark + " [--class=";
  for (std::size_t i = 0; i < classes.size(); ++i) {
    if (i > 0) usage += '|';
    usage += classes[i];
  }
  usage += "] [--wrong-verification]";
  for (const std::string& name : extra_names) usage += " [--" + name + "=VALUE]";
  bsp_abort("%s: %s\n%s\n", benchmark.c_str(), problem.c_str(), usage.c_str());
}

}  // namespace

NpbOptions parse_npb_options(int argc, char** argv, const std::string& benchmark, const std::string& classes,
                             const std::vector<std::string>& extra_names) {
  NpbOptions options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--class=", 0) == 0) {
      std::string letter = arg.substr(8);
      if (letter.size() != 1 || classes.find(static_cast<char>(std::toupper(letter[0]))) == std::string::npos)
        usage_error(benchmark, classes, extra_names, "unsupported class '" + letter + "'");
      options.problem_class = static_cast<char>(std::toupper(letter[0]));
    } else if (arg == "--wrong-verification") {
      options.wrong_verification = true;
    } else {
      bool known = false;
      for (const std::string& name : extra_names) {
        std::string prefix = "--" + name + "=";
        if (arg.rfind(prefix, 0) == 0) {
          options.extra[name] = arg.substr(prefix.size());
          known = true;
        }
      }
      if (!known) usage_error(benchmark, classes, extra_names, "unknown argument '" + arg + "'");
    }
  }
  return options;
}

}  // namespace nas
