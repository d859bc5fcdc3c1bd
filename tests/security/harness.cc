// tests/security/harness.cc: see harness.h.
#include "tests/security/harness.h"

#include <dirent.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <cstdlib>
#include <random>

namespace bsp::security {

std::string make_directory(const std::string& prefix) {
  const char* base = std::getenv("TEST_TMPDIR");
  std::string pattern = std::string(base && *base ? base : "/tmp") + "/" + prefix + "XXXXXX";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (!::mkdtemp(buffer.data())) return {};
  return buffer.data();
}

void remove_directory(const std::string& path) {
  if (path.empty()) return;
  if (DIR* dir = ::opendir(path.c_str())) {
    while (dirent* entry = ::readdir(dir)) {
      std::string name = entry->d_name;
      if (name != "." && name != "..") ::unlink((path + "/" + name).c_str());
    }
    ::closedir(dir);
  }
  ::rmdir(path.c_str());
}

AttackedRun run_attacked(const JobSpec& spec) {
  AttackedRun run;
  run.spec = spec;
  std::random_device device;
  const std::string tag_value = std::to_string(::getpid()) + "-" + std::to_string(device());
  const std::string ready_dir = make_directory("ready");
  std::vector<std::unique_ptr<Attacker>> attackers;
  for (Plan plan : spec.plans) {
    AttackOptions options;
    options.plan = plan;
    options.tag = "BSP_SECURITY_TAG=" + tag_value;
    options.ready_dir = ready_dir;
    options.processes = spec.processes;
    options.hold_seconds = spec.hold_seconds;
    options.segment_netns = spec.segment_netns;
    options.segment = spec.segment;
    attackers.push_back(std::make_unique<Attacker>(options));
  }
  std::vector<std::string> argv;
  if (spec.descriptor_limit > 0) {
    // util-linux's prlimit execs bsprun with the limit: bsprun cannot raise it (it raises
    // its soft limit to the hard one), and a stranger only has to fill this many.
    argv = {"prlimit",
            "--nofile=" + std::to_string(spec.descriptor_limit) + ":" + std::to_string(spec.descriptor_limit), "--"};
  }
  argv.insert(argv.end(), {kBsprun, "-n", std::to_string(spec.processes), "--transport=" + spec.transport, "--stats"});
  argv.insert(argv.end(), spec.bsprun_options.begin(), spec.bsprun_options.end());
  argv.insert(argv.end(), {kVictim, "--seconds=" + std::to_string(spec.seconds), "--ready-dir=" + ready_dir,
                           "--stagger-ms=" + std::to_string(spec.stagger_ms)});
  run.result = bsp::testing::run_program(argv, std::chrono::seconds(60), "", {{"BSP_SECURITY_TAG", tag_value}});
  for (auto& attacker : attackers) run.reports.push_back(attacker->stop());
  remove_directory(ready_dir);
  return run;
}

std::string harm(const AttackedRun& run, double max_seconds) {
  const auto& result = run.result;
  std::string problems;
  if (result.timed_out) problems += "the job did not finish within the 60 s deadline; ";
  if (result.exit_code != 0) problems += "exit status " + std::to_string(result.exit_code) + "; ";
  int verified = bsp::testing::count_occurrences(result.out, "supersteps verified");
  if (verified != run.spec.processes) {
    problems += std::to_string(verified) + " of " + std::to_string(run.spec.processes) +
                " processes verified their data; ";
  }
  if (result.out.find("ATTACKER") != std::string::npos || result.err.find("ATTACKER") != std::string::npos) {
    problems += "the attacker's text was printed; ";
  }
  for (const char* sign :
       {"victim: pid", "lost contact", "malformed record", "stopping the other", "unexpected hello"}) {
    if (result.err.find(sign) != std::string::npos) problems += std::string("stderr says '") + sign + "'; ";
  }
  if (result.seconds > max_seconds) {
    problems += "took " + std::to_string(result.seconds) + " s (bound " + std::to_string(max_seconds) + " s); ";
  }
  return problems;
}

std::string explain(const AttackedRun& run) {
  std::string text = bsp::testing::describe(run.result) + "\njob took " + std::to_string(run.result.seconds) + " s\n";
  for (const Report& report : run.reports) text += "attacker report:\n" + describe(report);
  return text;
}

}  // namespace bsp::security
