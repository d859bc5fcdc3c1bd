// tests/shm/shm_job_test.cc: whole jobs over shared memory. A process SIGKILLed inside a
// superstep that moves data stops the job within a second, naming it, and nothing is left
// behind: no process, no mapping or descriptor of an inbox (memfds vanish with their last
// holder). The default transport on one host is shm.
#include <dirent.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <limits.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "tests/run_program.h"

namespace {

using bsp::testing::calibrated_bound;
using bsp::testing::describe;
using bsp::testing::ProgramResult;
using bsp::testing::run_program;
using namespace std::chrono_literals;

const std::string kBsprun = "bsplib/bsprun";
const std::string kCases = "tests/bsp_cases";

// Processes of this machine that hold or map a shm inbox, or run the test cases.
std::vector<std::string> leftovers() {
  std::vector<std::string> found;
  DIR* proc = ::opendir("/proc");
  for (dirent* entry; proc && (entry = ::readdir(proc));) {
    std::string pid = entry->d_name;
    if (pid.find_first_not_of("0123456789") != std::string::npos || pid == std::to_string(::getpid())) continue;
    std::ifstream maps("/proc/" + pid + "/maps");
    std::stringstream text;
    text << maps.rdbuf();
    if (text.str().find("bsplib-shm-inbox") != std::string::npos) found.push_back(pid + " maps an inbox");
    std::ifstream cmdline("/proc/" + pid + "/cmdline");
    std::string command;
    std::getline(cmdline, command, '\0');
    if (command.find("tests/bsp_cases") != std::string::npos) found.push_back(pid + " runs " + command);
  }
  if (proc) ::closedir(proc);
  return found;
}

// A --stats count summed over the job (the coordinator's `total` line); -1 if absent.
long job_total(const std::string& err, const std::string& key) {
  std::size_t at = err.find("total   supersteps=");
  at = at == std::string::npos ? at : err.find(" " + key + "=", at);
  return at == std::string::npos ? -1L : std::stol(err.substr(at + key.size() + 2));
}

TEST(ShmJob, KilledInsideASuperstepStopsTheJobAndLeavesNothing) {
  for (int procs : {2, 4}) {
    ProgramResult reference = run_program(
        {kBsprun, "-n", std::to_string(procs), "--transport=shm", kCases, "--case=put_all_to_all"}, 30s);
    ASSERT_EQ(reference.exit_code, 0) << describe(reference);
    ProgramResult result = run_program(
        {kBsprun, "-n", std::to_string(procs), "--transport=shm", kCases, "--case=killed_mid_superstep"}, 30s);
    EXPECT_FALSE(result.timed_out) << describe(result);
    EXPECT_NE(result.exit_code, 0) << describe(result);
    EXPECT_NE(result.err.find("pid " + std::to_string(procs - 1)), std::string::npos) << describe(result);
    EXPECT_NE(result.err.find("signal 9"), std::string::npos) << describe(result);
    // Killed 50 ms in; start-up and the others' leaving take the rest: about a clean
    // job's time (1.5 s on an idle machine, scaled by a clean job's time now).
    EXPECT_LT(result.seconds, calibrated_bound(1.5, reference)) << describe(result);
    std::vector<std::string> left = leftovers();
    EXPECT_TRUE(left.empty()) << left.size() << " left, first: " << left.front();
  }
}

// A sender stuck in the middle of staging a large get reply inside its bsp_sync (its
// staged mark stops at half): the receiver, copying behind that mark, says after
// --stall-warn what it waits for (the pid, the superstep, the mark needed and seen), and
// after --link-timeout of a still mark stops the job, naming both; nothing is left
// behind. Before, the receiver polled the mark in silence for as long as the sender
// lived (here: forever). A sender that dies there stops the job at once, naming it.
TEST(ShmJob, AStuckStagingSenderIsNamedAndStopsTheJob) {
  auto job = [](const std::string& name, const std::string& link_timeout) {
    return std::vector<std::string>{kBsprun,
                                    "-n",
                                    "2",
                                    "--transport=shm",
                                    "--shm-single-copy=off",
                                    "--stall-warn=0.5",
                                    "--link-timeout=" + link_timeout,
                                    kCases,
                                    "--case=" + name};
  };
  ProgramResult reference = run_program(job("large_transfers", "2"), 60s);
  ASSERT_EQ(reference.exit_code, 0) << describe(reference);
  ProgramResult result = run_program(job("staging_writer_stuck", "2"), 60s);
  ASSERT_NE(result.err.find("pid 0 stuck staging its get reply"), std::string::npos) << describe(result);
  EXPECT_FALSE(result.timed_out) << describe(result);
  EXPECT_NE(result.exit_code, 0) << describe(result);
  EXPECT_NE(result.err.find("pid 1 has waited"), std::string::npos) << describe(result);
  EXPECT_NE(result.err.find("in bsp_sync (superstep 1) for pid 0's staged mark"), std::string::npos)
      << describe(result);
  EXPECT_NE(result.err.find("a pulled transfer of 4194304 bytes"), std::string::npos) << describe(result);
  EXPECT_NE(result.err.find("needs (1, "), std::string::npos) << describe(result);
  EXPECT_NE(result.err.find("2097152 of the bytes copied; the mark has not moved"), std::string::npos)
      << describe(result);
  EXPECT_NE(result.err.find("stopping the job (--link-timeout=2)"), std::string::npos) << describe(result);
  // The link timeout (2 s) and the stop: 10 s idle, or 2 s + a multiple of a clean job.
  EXPECT_LT(result.seconds, 2.0 + calibrated_bound(10.0, reference)) << describe(result);
  std::vector<std::string> left = leftovers();
  EXPECT_TRUE(left.empty()) << left.size() << " left, first: " << left.front();
  // Dead, not stuck: the coordinator's news ends the wait long before the link timeout.
  ProgramResult died = run_program(job("staging_writer_dies", "30"), 60s);
  EXPECT_FALSE(died.timed_out) << describe(died);
  EXPECT_NE(died.exit_code, 0) << describe(died);
  EXPECT_NE(died.err.find("pid 0"), std::string::npos) << describe(died);
  EXPECT_NE(died.err.find("signal 9"), std::string::npos) << describe(died);
  EXPECT_LT(died.seconds, calibrated_bound(10.0, reference)) << describe(died);
  left = leftovers();
  EXPECT_TRUE(left.empty()) << left.size() << " left, first: " << left.front();
}

// Push-Pull: the semantics hold whether every transfer is pushed through the rings
// (--pull-threshold=0), every one is staged and pulled (1), or as by default; at p = 3,
// where one process's staging memory serves two readers.
TEST(ShmJob, SemanticsHoldPushedAndPulled) {
  for (const char* threshold : {"0", "1", "256"}) {
    for (const char* name :
         {"put_all_to_all", "get_before_put", "overlapping_puts", "put_copies_source", "hp_variants", "large_transfers",
          "all_to_all_bulk", "many_small_puts", "many_to_one", "many_supersteps"}) {
      ProgramResult result = run_program(
          {kBsprun, "-n", "3", "--transport=shm", std::string("--pull-threshold=") + threshold, kCases,
           std::string("--case=") + name},
          60s);
      EXPECT_EQ(result.exit_code, 0) << name << " threshold " << threshold << "\n" << describe(result);
      EXPECT_NE(result.out.find(std::string("case ") + name + " passed"), std::string::npos) << describe(result);
    }
  }
}

// A reader stuck inside its bsp_sync after it read an hp-put's source straight from the
// sender's memory, before its read mark says so: the sender, which may not leave the
// sync while its source may still be read, says after --stall-warn what it waits for
// (the reader, the superstep, the read mark needed and seen), and after --link-timeout
// of a still mark stops the job naming both; nothing is left behind.
TEST(ShmJob, AStuckSingleCopyReaderIsNamedAndStopsTheJob) {
  auto job = [](const std::string& name) {
    return std::vector<std::string>{kBsprun,
                                    "-n",
                                    "2",
                                    "--transport=shm",
                                    "--shm-single-copy=any",
                                    "--stall-warn=0.5",
                                    "--link-timeout=2",
                                    kCases,
                                    "--case=" + name};
  };
  ProgramResult reference = run_program(job("large_transfers"), 60s);
  ASSERT_EQ(reference.exit_code, 0) << describe(reference);
  ProgramResult result = run_program(job("single_copy_reader_stuck"), 60s);
  ASSERT_NE(result.err.find("pid 0 stuck applying a put"), std::string::npos) << describe(result);
  EXPECT_FALSE(result.timed_out) << describe(result);
  EXPECT_NE(result.exit_code, 0) << describe(result);
  EXPECT_NE(result.err.find("pid 1 has waited"), std::string::npos) << describe(result);
  EXPECT_NE(result.err.find("in bsp_sync (superstep 1) for pid 0's read mark: it reaches 4 once pid 0 has read this "
                            "process's hp-put sources; it says "),
            std::string::npos)
      << describe(result);
  EXPECT_NE(result.err.find("(pid 0 reads this memory inside its bsp_sync"), std::string::npos) << describe(result);
  EXPECT_NE(result.err.find("stopping the job (--link-timeout=2)"), std::string::npos) << describe(result);
  // The link timeout (2 s) and the stop: 2 s + a multiple of a clean job.
  EXPECT_LT(result.seconds, 2.0 + calibrated_bound(10.0, reference)) << describe(result);
  std::vector<std::string> left = leftovers();
  EXPECT_TRUE(left.empty()) << left.size() << " left, first: " << left.front();
}

// Single copies (transport/shm/cross_memory.h): large hp-puts and gets that the receiver
// reads straight from the sender's memory keep the semantics at p = 2..4, where every
// large one is (--shm-single-copy=any, from 64 KiB; dense and sparse sync), on huge pages
// only (the default), and
// turned off by option or environment (staging: two copies); --stats says which path ran.
TEST(ShmJob, SingleCopiesKeepTheSemantics) {
  struct Mode {
    std::vector<std::string> options;
    std::map<std::string, std::string> environment;
    bool single;  // every large hp-put and get is a single copy
  };
  const std::vector<Mode> modes = {
      {{"--shm-single-copy=any", "--shm-single-copy-from=65536"}, {}, true},
      {{"--shm-single-copy=any", "--shm-single-copy-from=65536", "--sync=sparse"}, {}, true},
      {{}, {}, false},
      {{"--shm-single-copy=off"}, {}, false},
      {{}, {{"BSP_SHM_SINGLE_COPY", "off"}}, false},
  };
  for (int procs : {2, 3, 4}) {
    for (std::size_t m = 0; m < modes.size(); ++m) {
      for (const char* name : {"single_copy_regions", "large_gathered", "large_transfers", "get_before_put"}) {
        if (procs != 3 && std::string(name) != "single_copy_regions") continue;
        std::vector<std::string> argv = {kBsprun, "-n", std::to_string(procs), "--transport=shm", "--stats"};
        argv.insert(argv.end(), modes[m].options.begin(), modes[m].options.end());
        argv.insert(argv.end(), {kCases, std::string("--case=") + name});
        ProgramResult result = run_program(argv, 120s, "", modes[m].environment);
        std::string label = std::string(name) + " p=" + std::to_string(procs) + " mode " + std::to_string(m);
        ASSERT_EQ(result.exit_code, 0) << label << "\n" << describe(result);
        EXPECT_NE(result.out.find(std::string("case ") + name + " passed"), std::string::npos) << describe(result);
        if (std::string(name) != "single_copy_regions") continue;
        // 4 steps of 2 hp-puts and 2 gets served per process, and a bsp_put (always two
        // copies); a get whose owner's own get lands where it reads is staged.
        if (modes[m].single) {
          EXPECT_EQ(result.err.find("shm_single_copies=0"), std::string::npos) << label << "\n" << describe(result);
          EXPECT_NE(result.err.find("shm_two_copies=8 shm_two_copies_bsp_put=4 shm_two_copies_own_get_lands_there=4 "),
                    std::string::npos)
              << label << "\n"
              << describe(result);
        } else if (m >= 3) {
          EXPECT_NE(
              result.err.find("shm_single_copies=0 shm_two_copies=20 shm_two_copies_bsp_put=4 shm_two_copies_off=16"),
              std::string::npos)
              << label << "\n"
              << describe(result);
        }
      }
    }
  }
}

// Superstep lines: a superstep whose traffic to a peer fits one cache line (an empty one,
// a small put) sends no frame at all, so 2000 supersteps of one 8-byte put each cost a
// handful of frames (registration and bsp_end's supersteps), against one per superstep and
// peer with the lines off; the semantics hold either way, in the dense protocol (the
// sparse one has no lines), pushed and pulled.
TEST(ShmJob, SmallSuperstepsTravelInOneCacheLine) {
  for (const char* lines : {"1", "0"}) {
    ProgramResult result = run_program({kBsprun, "-n", "2", "--transport=shm", "--stats",
                                        std::string("--superstep-lines=") + lines, kCases, "--case=many_supersteps"},
                                       60s);
    ASSERT_EQ(result.exit_code, 0) << describe(result);
    long frames = job_total(result.err, "data_sent");
    if (std::string(lines) == "1") {
      EXPECT_GE(frames, 0) << describe(result);
      EXPECT_LE(frames, 10) << describe(result);
    } else {
      EXPECT_GE(frames, 2 * 2000) << describe(result);
    }
  }
  for (const char* lines : {"1", "0"}) {
    for (const char* threshold : {"0", "256"}) {
      for (int procs : {2, 3}) {
        for (const char* name :
             {"lines_and_frames", "small_supersteps_to_every_peer", "tagsize_states", "registration_order_and_pop",
              "get_before_put", "bsmp_all_to_all", "many_supersteps"}) {
          ProgramResult result = run_program(
              {kBsprun, "-n", std::to_string(procs), "--transport=shm", std::string("--superstep-lines=") + lines,
               std::string("--pull-threshold=") + threshold, kCases, std::string("--case=") + name},
              60s);
          EXPECT_EQ(result.exit_code, 0) << name << " lines " << lines << " p=" << procs << "\n" << describe(result);
          EXPECT_NE(result.out.find(std::string("case ") + name + " passed"), std::string::npos) << describe(result);
        }
      }
    }
  }
}

// Quiet supersteps (nobody sends: each process waits for its peers' empty lines alone):
// with --quiet-supersteps=1 they run at every process count, even where processes share
// a core, and --stats counts them; with 0 none do. Either way every case holds, among
// them runs of quiet supersteps broken by one sender (a line's records, frames, a
// message), by one that computes while the others' looks run out, and by tag size and
// registration changes; a process calling bsp_end while the others are quiet in bsp_sync
// stops the job naming both calls.
TEST(ShmJob, QuietSuperstepsKeepTheSemantics) {
  for (const char* quiet : {"1", "0"}) {
    for (int procs : {1, 2, 3, 4}) {
      for (const char* name : {"quiet_and_busy_supersteps", "empty_supersteps", "lines_and_frames", "tagsize_states",
                               "registration_order_and_pop", "bsmp_all_to_all", "get_before_put"}) {
        const std::string label = fmt::format("{} quiet {} p={}", name, quiet, procs);
        ProgramResult result = run_program(
            {kBsprun, "-n", std::to_string(procs), "--transport=shm", "--stats",
             std::string("--quiet-supersteps=") + quiet, kCases, std::string("--case=") + name},
            60s);
        ASSERT_EQ(result.exit_code, 0) << label << "\n" << describe(result);
        EXPECT_NE(result.out.find(std::string("case ") + name + " passed"), std::string::npos) << describe(result);
        const long counted = job_total(result.err, "quiet_supersteps");
        if (std::string(quiet) == "0") {
          EXPECT_EQ(counted, 0) << label << "\n" << describe(result);
        } else if (std::string(name) == "empty_supersteps" || std::string(name) == "quiet_and_busy_supersteps") {
          EXPECT_GT(counted, 0) << label << "\n" << describe(result);
        }
      }
    }
  }
  ProgramResult ended = run_program(
      {kBsprun, "-n", "3", "--transport=shm", "--quiet-supersteps=1", kCases, "--case=mismatched_end"}, 30s);
  EXPECT_FALSE(ended.timed_out) << describe(ended);
  EXPECT_NE(ended.exit_code, 0) << describe(ended);
  for (const char* word : {"mismatched", "bsp_sync", "bsp_end"}) {
    EXPECT_NE(ended.err.find(word), std::string::npos) << word << "\n" << describe(ended);
  }
}

// A core per process while the host has one for each (--pin=1): p = 2 on this machine's
// cores lands on two different CPUs; by default (and --pin=0), and with more processes
// than cores, the scheduler places them.
TEST(ShmJob, ProcessesGetACoreEachWhileThereAreEnough) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  ASSERT_EQ(::sched_getaffinity(0, sizeof allowed, &allowed), 0);
  const int cores = CPU_COUNT(&allowed);
  if (cores < 2) GTEST_SKIP() << "needs 2 usable cores, has " << cores;
  auto pins = [](const std::string& err) {
    std::vector<std::string> found;
    for (std::size_t at = err.find(" pin:"); at != std::string::npos; at = err.find(" pin:", at + 1)) {
      found.push_back(err.substr(at + 5, err.find_first_of(" \n", at + 5) - at - 5));
    }
    return found;
  };
  ProgramResult pinned = run_program(
      {kBsprun, "-n", "2", "--transport=shm", "--stats", "--pin=1", kCases, "--case=many_supersteps"}, 60s);
  ASSERT_EQ(pinned.exit_code, 0) << describe(pinned);
  std::vector<std::string> two = pins(pinned.err);
  ASSERT_EQ(two.size(), 2u) << describe(pinned);
  EXPECT_EQ(two[0].rfind("pinned-cpu", 0), 0u) << describe(pinned);
  EXPECT_EQ(two[1].rfind("pinned-cpu", 0), 0u) << describe(pinned);
  EXPECT_NE(two[0], two[1]) << describe(pinned);
  for (const char* option : {"--pin=0", "--stats"}) {  // (the default: off)
    ProgramResult off = run_program(
        {kBsprun, "-n", "2", "--transport=shm", "--stats", option, kCases, "--case=many_supersteps"}, 60s);
    ASSERT_EQ(off.exit_code, 0) << describe(off);
    std::vector<std::string> unpinned = pins(off.err);
    EXPECT_EQ(unpinned.size(), 2u) << describe(off);
    for (const std::string& pin : unpinned) EXPECT_EQ(pin, "off") << describe(off);
  }
  ProgramResult crowded = run_program({kBsprun, "-n", std::to_string(cores + 1), "--transport=shm", "--stats",
                                       "--pin=1", kCases, "--case=empty_supersteps"},
                                      120s);
  ASSERT_EQ(crowded.exit_code, 0) << describe(crowded);
  std::vector<std::string> many = pins(crowded.err);
  ASSERT_EQ(many.size(), static_cast<std::size_t>(cores + 1)) << describe(crowded);
  for (const std::string& pin : many) EXPECT_EQ(pin.rfind("not-pinned(", 0), 0u) << describe(crowded);
}

// Staging memory is taken again for the next superstep only once its readers' read
// marks say they are done (Engine::stage_for): a reader still copying sees no byte of the
// next superstep's data, for puts, hp-puts and staged get replies, dense and sparse. And
// hp-put and get data staged during the sync is read only behind its sender's staged
// mark (Engine::copy_pulled): a reader ahead of it would see the last superstep's bytes.
TEST(ShmJob, StagingIsReusedOnlyOnceRead) {
  for (const char* sync : {"--sync=dense", "--sync=sparse"}) {
    ProgramResult result = run_program(
        {kBsprun, "-n", "3", "--transport=shm", sync, "--shm-single-copy=off", kCases, "--case=staging_reuse"}, 120s);
    ASSERT_EQ(result.exit_code, 0) << sync << "\n" << describe(result);
    EXPECT_NE(result.out.find("case staging_reuse passed"), std::string::npos) << describe(result);
  }
}

// Sources on 4 KiB pages sent again (transport/shm/huge_page_sources.h): each range is
// staged (two copies) the first time, moved onto huge pages the second (MADV_COLLAPSE)
// and read straight from then on; memory advised MADV_NOHUGEPAGE is refused by the kernel
// and stays on two copies, as does everything with --shm-collapse=off. The data lands
// right either way (tests/bsp_cases.cc, collapsed_sources); --stats says which path ran.
TEST(ShmJob, SourcesSentAgainMoveOntoHugePages) {
  std::ifstream thp("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  std::getline(thp, modes);
  if (modes.find("[always]") != std::string::npos) GTEST_SKIP() << "every buffer is on huge pages from the start here";
  for (int procs : {2, 3}) {
    // Per process: 6 hp-puts and 6 gets served, each from one range sent six times.
    const int transfers = 12 * procs;
    const std::string p = std::to_string(procs);
    ProgramResult on = run_program({kBsprun, "-n", p, "--transport=shm", "--stats", kCases, "--case=collapsed_sources"},
                                   120s);
    ASSERT_EQ(on.exit_code, 0) << describe(on);
    EXPECT_NE(on.out.find("case collapsed_sources passed"), std::string::npos) << describe(on);
    if (on.err.find("shm_not_collapsed:") != std::string::npos) {
      GTEST_SKIP() << "the kernel does not collapse memory onto huge pages here:\n" << on.err;
    }
    EXPECT_NE(
        on.err.find(fmt::format("shm_single_copies={} shm_two_copies={} shm_two_copies_4k_pages={} shm_collapses={}",
                                transfers - 2 * procs, 2 * procs, 2 * procs, 2 * procs)),
        std::string::npos)
        << describe(on);

    ProgramResult refused = run_program(
        {kBsprun, "-n", p, "--transport=shm", "--stats", kCases, "--case=collapsed_sources_refused"}, 120s);
    ASSERT_EQ(refused.exit_code, 0) << describe(refused);
    EXPECT_NE(refused.out.find("case collapsed_sources_refused passed"), std::string::npos) << describe(refused);
    EXPECT_NE(refused.err.find(fmt::format("shm_single_copies=0 shm_two_copies={} shm_two_copies_4k_pages={} "
                                           "shm_two_copies_not_collapsed={}",
                                           transfers, 2 * procs, transfers - 2 * procs)),
              std::string::npos)
        << describe(refused);
    EXPECT_NE(refused.err.find("shm_not_collapsed:madvise(MADV_COLLAPSE)"), std::string::npos) << describe(refused);

    ProgramResult off = run_program(
        {kBsprun, "-n", p, "--transport=shm", "--stats", "--shm-collapse=off", kCases, "--case=collapsed_sources"},
        120s);
    ASSERT_EQ(off.exit_code, 0) << describe(off);
    EXPECT_NE(off.err.find(fmt::format("shm_single_copies=0 shm_two_copies={} shm_two_copies_4k_pages={}", transfers,
                                       transfers)),
              std::string::npos)
        << describe(off);
    EXPECT_EQ(off.err.find("shm_collapses="), std::string::npos) << describe(off);
  }
}

TEST(ShmJob, DefaultTransportOnOneHostIsSharedMemory) {
  ProgramResult result = run_program({kBsprun, "-n", "3", "--stats", kCases, "--case=put_all_to_all"}, 30s);
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  // Every peer on this host: shm alone, no network path.
  EXPECT_NE(result.err.find("shm_peers=2 net_peers=0 shm:1,2"), std::string::npos) << describe(result);
}

TEST(ShmJob, ProcessesBeyondTheCoresStillSyncQuickly) {
  // 8 processes on this machine's 2 cores: the waiting must yield and sleep, not spin
  // a time slice away (2000 supersteps in seconds, not minutes).
  // The reference: the same supersteps with 2 processes, one per core (no yielding
  // needed); spinning 8 would take minutes, far past any multiple of it.
  ProgramResult reference = run_program({kBsprun, "-n", "2", "--transport=shm", kCases, "--case=many_supersteps"},
                                        120s);
  ASSERT_EQ(reference.exit_code, 0) << describe(reference);
  ProgramResult result = run_program({kBsprun, "-n", "8", "--transport=shm", kCases, "--case=many_supersteps"}, 300s);
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_LT(result.seconds, calibrated_bound(20.0, reference, 30)) << describe(result);
}

}  // namespace
