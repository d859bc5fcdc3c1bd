// bench/bench_flags.h: what the BSPlib micro-benchmarks share: answering --help, reading
// `--name=value` flags (every process parses the same argv, so all agree on sizes and counts), sample
// summaries (minimum, median), and the size ladders the paper's figures use.
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace bench {

// True, after printing usage to stdout, when argv holds --help or -h: main then returns 0
// before bsp_begin, so `bazel-bin/bench/NAME --help` works without bsprun.
inline bool wants_help(int argc, char** argv, const char* usage) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::fputs(usage, stdout);
      return true;
    }
  }
  return false;
}

class Flags {
 public:
  Flags(int argc, char** argv) : argc_(argc), argv_(argv) {}

  // The value of --name=value, or fallback when absent.
  std::string text(const char* name, const std::string& fallback) const {
    std::string prefix = std::string("--") + name + "=";
    for (int i = 1; i < argc_; ++i) {
      if (std::strncmp(argv_[i], prefix.c_str(), prefix.size()) == 0) return argv_[i] + prefix.size();
    }
    return fallback;
  }
  long number(const char* name, long fallback) const {
    std::string value = text(name, "");
    return value.empty() ? fallback : std::atol(value.c_str());
  }
  // A comma-separated list of numbers (e.g. --sizes=4,1400), or fallback.
  std::vector<long> numbers(const char* name, const std::vector<long>& fallback) const {
    std::string value = text(name, "");
    if (value.empty()) return fallback;
    std::vector<long> list;
    for (const char* at = value.c_str(); *at;) {
      char* end = nullptr;
      list.push_back(std::strtol(at, &end, 10));
      at = *end == ',' ? end + 1 : end;
      if (end == at && *at) break;  // not a number: stop rather than loop
    }
    return list;
  }

 private:
  int argc_;
  char** argv_;
};

// Minimum and median of samples (sorted in place).
struct Summary {
  double min = 0, median = 0;
};
inline Summary summarize(std::vector<double>& samples) {
  if (samples.empty()) return {};
  std::sort(samples.begin(), samples.end());
  return {samples.front(), samples[samples.size() / 2]};
}

// 4, 8, 16, ... up to and including largest (Fig. 1 and 2's x axis).
inline std::vector<long> powers_of_two(long smallest, long largest) {
  std::vector<long> sizes;
  for (long size = smallest; size <= largest; size *= 2) sizes.push_back(size);
  return sizes;
}

// sizes with `extra` added in order (e.g. 1400, the paper's near-full frame).
inline std::vector<long> with_size(std::vector<long> sizes, long extra) {
  if (std::find(sizes.begin(), sizes.end(), extra) == sizes.end()) sizes.push_back(extra);
  std::sort(sizes.begin(), sizes.end());
  return sizes;
}

// 1, 2, 5, 10, 20, 50, ... up to and including largest (Figs. 3 and 4's x axis).
inline std::vector<long> one_two_five(long largest) {
  std::vector<long> counts;
  for (long decade = 1; decade <= largest; decade *= 10) {
    for (long step : {1, 2, 5}) {
      if (decade * step <= largest) counts.push_back(decade * step);
    }
  }
  if (counts.empty() || counts.back() != largest) counts.push_back(largest);
  return counts;
}

}  // namespace bench
