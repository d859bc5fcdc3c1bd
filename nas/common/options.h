// nas/common/options.h: the command line every NAS kernel accepts:
//   --class=S|W|A|B|C       problem class (default S)
//   --wrong-verification    perturb the official reference values, so a test can watch
//                           the benchmark report UNSUCCESSFUL and exit non-zero
//   plus any --name=value options the benchmark declares itself.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace nas {

struct NpbOptions {
  char problem_class = 'S';
  bool wrong_verification = false;
  std::map<std::string, std::string> extra;  // declared benchmark-specific --name=value

  // The value of an extra option, or fallback when it was not given.
  std::string get(const std::string& name, const std::string& fallback) const;
};

// Parses argv (call inside the SPMD part, after bsp_begin: every process parses its own
// copy). classes: the letters the benchmark supports, e.g. "SWABC". extra_names: the
// benchmark's own option names without "--". A bad option stops the job via bsp_abort
// with a usage message, so the exit status is non-zero.
NpbOptions parse_npb_options(int argc, char** argv, const std::string& benchmark, const std::string& classes,
                             const std::vector<std::string>& extra_names = {});

}  // namespace nas
