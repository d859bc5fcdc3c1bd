// tests/profile/profile_test.cc: the superstep profiler (bsprun --profile, bspprof).
//  - the trace format round-trips through its reader, and the reader refuses every
//    truncated or damaged file with a TraceError (never a crash, never a wild allocation);
//  - the prediction is w + h·g + l for given S, L, G, and h is counted as BSP defines it;
//  - a program with known supersteps (known_supersteps.c) gives the h, message counts,
//    puts, gets, sends, busy time and call sites (file:line) it should, over each transport;
//  - bspprof's trace-event JSON parses (python3's json) and has one event per process per
//    superstep;
//  - profiling a NAS class S run changes none of its results.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "bsplib/profile/trace_format.h"
#include "tests/run_program.h"
#include "tools/bspprof/analysis.h"

namespace {

using namespace bsp::profile;
using bsp::testing::ProgramResult;
using bsp::testing::run_program;

const std::string kBsprun = "bsplib/bsprun";
const std::string kSource = "tests/profile/known_supersteps.c";
const std::string kBspprof = "tools/bspprof/bspprof";

std::string temporary_dir() {
  const char* base = std::getenv("TEST_TMPDIR");
  std::string pattern = std::string(base ? base : "/tmp") + "/profXXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  if (!::mkdtemp(name.data())) return "/tmp";
  return name.data();
}

ProcessTrace sample_trace(int pid, int nprocs, int steps) {
  ProcessTrace t;
  t.pid = pid;
  t.nprocs = nprocs;
  t.begin_ns = 1000000000ull + static_cast<std::uint64_t>(pid);
  t.transport = "udp";
  t.executable = "/path/to/prog";
  std::uint64_t now = t.begin_ns;
  for (int s = 0; s < steps; ++s) {
    Step step;
    step.index = static_cast<std::uint32_t>(s);
    step.flags = s == steps - 1 ? kFinalStep : 0;
    step.sync_start_ns = now += 1000;
    step.sync_end_ns = now += 500;
    step.call_site = 0x401000 + static_cast<std::uint64_t>(s);
    step.puts = static_cast<std::uint32_t>(s);
    step.gets = 2;
    step.sends = 3;
    step.wire = WireCounters{1, 2, 3, 4, 5, 6, 7};
    step.peers.push_back(PeerTraffic{static_cast<std::uint32_t>((pid + 1) % nprocs), 4, 400, 1, 8});
    t.steps.push_back(step);
  }
  t.mappings.push_back(Mapping{0x400000, 0x500000, 0x1000, "/path/to/prog"});
  t.end_ns = now + 10;
  return t;
}

std::span<const std::byte> bytes_of(const std::string& s) { return std::as_bytes(std::span(s.data(), s.size())); }

TEST(TraceFormat, RoundTripsThroughTheReader) {
  std::string file = encode(sample_trace(1, 3, 5)) + encode(sample_trace(0, 3, 5)) + encode(sample_trace(2, 3, 5));
  std::vector<ProcessTrace> back = decode(bytes_of(file));
  ASSERT_EQ(back.size(), 3u);
  for (int pid = 0; pid < 3; ++pid) EXPECT_EQ(back[static_cast<std::size_t>(pid)], sample_trace(pid, 3, 5));
}

TEST(TraceFormat, RefusesEveryTruncation) {
  std::string file = encode(sample_trace(0, 2, 3)) + encode(sample_trace(1, 2, 3));
  const std::size_t first = encode(sample_trace(0, 2, 3)).size();
  for (std::size_t n = 0; n < file.size(); ++n) {
    if (n == first) continue;  // exactly the first section: a whole (one-process) file
    EXPECT_THROW(decode(bytes_of(file.substr(0, n))), TraceError) << "cut at " << n;
  }
}

TEST(TraceFormat, DamagedBytesGiveAnErrorOrAValidTrace) {
  const std::string file = encode(sample_trace(0, 2, 4)) + encode(sample_trace(1, 2, 4));
  std::mt19937 random(16);
  for (int trial = 0; trial < 20000; ++trial) {
    std::string damaged = file;
    for (int k = 0; k < 1 + trial % 4; ++k) {
      damaged[random() % damaged.size()] = static_cast<char>(random());
    }
    try {
      for (const ProcessTrace& t : decode(bytes_of(damaged))) {
        EXPECT_LT(t.pid, t.nprocs);
        for (const Step& s : t.steps) {
          EXPECT_LE(s.sync_start_ns, s.sync_end_ns);
          for (const PeerTraffic& peer : s.peers) EXPECT_LT(peer.peer, static_cast<std::uint32_t>(t.nprocs));
        }
      }
    } catch (const TraceError&) {
    }
  }
}

TEST(TraceFormat, ErrorsSayWhatIsWrong) {
  std::string file = encode(sample_trace(0, 1, 1));
  std::string bad_magic = file;
  bad_magic[0] = 'X';
  try {
    decode(bytes_of(bad_magic));
    FAIL() << "bad magic accepted";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("bad magic"), std::string::npos) << e.what();
  }
  // A huge string length must be refused before anything is allocated.
  std::string huge;
  append_magic(huge);
  huge += '\x01';
  huge += std::string("\x20\x00\x00\x00", 4);
  huge += std::string("\x01\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00", 12);  // version, pid 0, nprocs 1
  huge += std::string(8, '\0');                                                 // begin
  huge += std::string("\xff\xff\xff\x7f", 4);                                   // transport length
  huge += std::string(4, '\0');
  try {
    decode(bytes_of(huge));
    FAIL() << "huge length accepted";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("at byte"), std::string::npos) << e.what();
  }
  // Two sections of one pid, and sections of different jobs.
  EXPECT_THROW(decode(bytes_of(file + file)), TraceError);
  EXPECT_THROW(decode(bytes_of(encode(sample_trace(0, 2, 1)) + encode(sample_trace(1, 3, 1)))), TraceError);
  EXPECT_THROW(decode(bytes_of("")), TraceError);
}

TEST(Prediction, IsWPlusHgPlusL) {
  Model model = parse_slg("100,5000,40");  // 100 Mflop/s, l = 5000 flops, g = 40 flops/word
  EXPECT_DOUBLE_EQ(model.l_seconds(), 5000 / 100e6);
  EXPECT_DOUBLE_EQ(model.g_seconds_per_word(), 40 / 100e6);
  EXPECT_DOUBLE_EQ(predicted_seconds(0.25, 8000, model), 0.25 + (1000 * 40 + 5000) / 100e6);
  EXPECT_DOUBLE_EQ(predicted_seconds(0, 0, model), 5000 / 100e6);
  EXPECT_THROW(parse_slg("0,1,1"), std::runtime_error);
  EXPECT_THROW(parse_slg("1,2"), std::runtime_error);
  EXPECT_THROW(parse_slg("1,2,3,4"), std::runtime_error);

  // Per superstep: w is the longest computation, h the largest fan-in or fan-out.
  std::vector<ProcessTrace> traces = {sample_trace(0, 2, 3), sample_trace(1, 2, 3)};
  traces[0].steps[1].peers = {PeerTraffic{1, 3, 2400, 0, 0}};  // 0 puts 2400 bytes into 1
  traces[1].steps[1].peers = {PeerTraffic{0, 0, 0, 1, 800}};   // 1 gets 800 bytes from 0
  traces[1].steps[1].sync_start_ns += 7000;                    // 1 computes 7 µs longer
  traces[1].steps[1].sync_end_ns += 7000;
  traces[1].steps[2].sync_start_ns += 7000;
  traces[1].steps[2].sync_end_ns += 7000;
  Profile profile = analyze(traces, model);
  ASSERT_EQ(profile.supersteps.size(), 3u);
  const SuperstepSummary& s = profile.supersteps[1];
  EXPECT_EQ(profile.steps[0][1].bytes_out, 3200u);  // its put, and the get it serves
  EXPECT_EQ(profile.steps[1][1].bytes_in, 3200u);
  EXPECT_EQ(profile.steps[0][1].messages_out, 4u);
  EXPECT_EQ(profile.steps[1][1].messages_in, 4u);
  EXPECT_EQ(s.h_bytes, 3200u);
  EXPECT_EQ(s.h_messages, 4u);
  EXPECT_NEAR(s.w_s, 8e-6, 1e-12);
  EXPECT_DOUBLE_EQ(s.predicted_s, s.w_s + (3200.0 / 8 * 40 + 5000) / 100e6);
}

// Line numbers of the SITE markers in the program's source.
std::map<char, int> site_lines() {
  std::map<char, int> lines;
  std::ifstream in(kSource);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    auto at = line.find("/* SITE ");
    if (at != std::string::npos && line.find("bsp_") != std::string::npos) lines[line[at + 8]] = number;
  }
  return lines;
}

// known_supersteps.c compiled as a user would (the installed bspcc, -g for file:line;
// Bazel's fastbuild strips debug information), once for the whole suite.
class KnownSupersteps : public ::testing::TestWithParam<std::string> {
 public:
  static void SetUpTestSuite() {
    dir_ = temporary_dir();
    ProgramResult installed = run_program({"tools/install.sh", dir_ + "/bsp"}, std::chrono::seconds(60));
    ASSERT_EQ(installed.exit_code, 0) << bsp::testing::describe(installed);
    program_ = dir_ + "/known_supersteps";
    ProgramResult compiled = run_program({dir_ + "/bsp/bin/bspcc", "-O1", "-g", "-prof", kSource, "-o", program_},
                                         std::chrono::seconds(120));
    ASSERT_EQ(compiled.exit_code, 0) << bsp::testing::describe(compiled);
  }

 protected:
  static inline std::string dir_, program_;
};

TEST_P(KnownSupersteps, GiveTheirHCountsAndCallSites) {
  const std::string transport = GetParam();
  if (!bsp::testing::transport_usable(kBsprun, transport)) GTEST_SKIP() << transport << " cannot run here";
  const int p = 3;
  ASSERT_FALSE(program_.empty());
  std::string dir = dir_ + "/" + transport;
  ::mkdir(dir.c_str(), 0700);
  std::string file = dir + "/known.prof";
  ProgramResult run = run_program(
      {dir_ + "/bsp/bin/bsprun", "-n", std::to_string(p), "--transport=" + transport, "--profile=" + file, program_},
      std::chrono::seconds(60));
  ASSERT_EQ(run.exit_code, 0) << bsp::testing::describe(run);
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_NE(::access((file + ".part1").c_str(), F_OK), 0) << "the parts are joined and removed";
  std::vector<ProcessTrace> traces = read_trace_file(file);
  ASSERT_EQ(traces.size(), static_cast<std::size_t>(p));
  Profile profile = analyze(traces, Model{});
  ASSERT_EQ(profile.supersteps.size(), 5u);
  std::map<char, int> lines = site_lines();
  ASSERT_EQ(lines.size(), 5u) << "SITE markers not found in " << kSource;
  SiteMap sites = locate_all(profile, traces);
  for (int i = 0; i < p; ++i) {
    const auto& steps = profile.steps[static_cast<std::size_t>(i)];
    EXPECT_EQ(traces[static_cast<std::size_t>(i)].transport, transport);
    // Superstep 1: 1000 bytes out to pid+1, 1000 in from pid-1, after 20 ms of work.
    EXPECT_EQ(steps[1].bytes_out, 1000u);
    EXPECT_EQ(steps[1].bytes_in, 1000u);
    EXPECT_EQ(steps[1].messages_out, 1u);
    EXPECT_EQ(steps[1].messages_in, 1u);
    EXPECT_EQ(steps[1].puts, 1u);
    EXPECT_GE(steps[1].comp_s, 0.020);
    EXPECT_LT(steps[1].comp_s, 0.5);
    // Superstep 2: a 512-byte get from pid+1 (served for pid-1) and 3 messages of 100
    // bytes + a 4-byte tag: 824 bytes and 4 messages each way.
    EXPECT_EQ(steps[2].bytes_out, 824u);
    EXPECT_EQ(steps[2].bytes_in, 824u);
    EXPECT_EQ(steps[2].messages_out, 4u);
    EXPECT_EQ(steps[2].messages_in, 4u);
    EXPECT_EQ(steps[2].gets, 1u);
    EXPECT_EQ(steps[2].sends, 3u);
    // Superstep 3: a put to itself is not communication.
    EXPECT_EQ(steps[3].puts, 1u);
    EXPECT_EQ(steps[3].bytes_out + steps[3].bytes_in, 0u);
    EXPECT_TRUE(steps[4].final);
    for (std::size_t s = 0; s < steps.size(); ++s) {
      EXPECT_GE(steps[s].sync_s, 0);
      if (s == 1 && transport == "shm") {
        // The 1000-byte put is staged; its 21-byte token travels in a superstep line, not a frame.
        EXPECT_EQ(steps[s].wire.frames_sent, 0u) << "superstep " << s;
      } else if (s >= 1 && s <= 2) {
        EXPECT_GT(steps[s].wire.frames_sent, 0u) << "superstep " << s;
      }
      const Site& site = sites.at({i, steps[s].call_site});
      char marker = static_cast<char>('A' + s);
      std::string expected = "known_supersteps.c:" + std::to_string(lines[marker]);
      EXPECT_NE(site.location.find(expected), std::string::npos)
          << "pid " << i << " superstep " << s << ": " << site.function << " at " << site.location << ", expected "
          << expected;
      EXPECT_EQ(site.function, "main");
    }
  }
  EXPECT_EQ(profile.supersteps[1].h_bytes, 1000u);
  EXPECT_EQ(profile.supersteps[2].h_messages, 4u);
  EXPECT_GE(profile.supersteps[1].w_s, 0.020);

  // bspprof: the JSON parses and has one event per process per superstep; the graphs exist.
  std::string out = dir + "/report";
  ProgramResult report = run_program({kBspprof, file, "--out=" + out, "--slg=100,5000,40"}, std::chrono::seconds(60));
  ASSERT_EQ(report.exit_code, 0) << bsp::testing::describe(report);
  EXPECT_NE(report.out.find("known_supersteps.c:" + std::to_string(lines['B'])), std::string::npos) << report.out;
  const std::string check =
      "import json, sys, collections\n"
      "d = json.load(open(sys.argv[1]))\n"
      "c = collections.Counter((e['pid'], e['name']) for e in d['traceEvents'] if e['ph'] == 'X')\n"
      "per_pid = collections.Counter(e['pid'] for e in d['traceEvents'] if e['ph'] == 'X')\n"
      "assert all(v == 1 for v in c.values()), c\n"
      "print(len(per_pid), sorted(set(per_pid.values())))\n";
  ProgramResult parsed = run_program({"python3", "-c", check, out + "/trace.json"}, std::chrono::seconds(30));
  ASSERT_EQ(parsed.exit_code, 0) << bsp::testing::describe(parsed);
  EXPECT_EQ(parsed.out, std::to_string(p) + " [5]\n");
  for (const char* graph : {"strata_bytes", "strata_messages", "prediction", "g_over_time"}) {
    for (const char* kind : {".png", ".svg"}) {
      struct stat g {};
      EXPECT_EQ(::stat((out + "/" + graph + kind).c_str(), &g), 0) << graph << kind;
      EXPECT_GT(g.st_size, 1000) << graph << kind;
    }
  }
}

// bspcc -prof: the program profiles itself by default to PROGRAM.prof; BSP_PROFILE= is off.
TEST_F(KnownSupersteps, BspccProfWritesTheProgramsProfile) {
  ASSERT_FALSE(program_.empty());
  std::string dir = dir_ + "/prof";
  ::mkdir(dir.c_str(), 0700);
  ProgramResult run = run_program({"sh", "-c", "cd '" + dir + "' && exec '" + program_ + "'"},
                                  std::chrono::seconds(60));
  ASSERT_EQ(run.exit_code, 0) << bsp::testing::describe(run);
  std::vector<ProcessTrace> traces = read_trace_file(dir + "/known_supersteps.prof");
  EXPECT_GE(traces.size(), 1u);
  EXPECT_EQ(traces[0].steps.size(), 5u);
  ::unlink((dir + "/known_supersteps.prof").c_str());
  ProgramResult off = run_program({"sh", "-c", "cd '" + dir + "' && BSP_PROFILE= exec '" + program_ + "'"},
                                  std::chrono::seconds(60));
  ASSERT_EQ(off.exit_code, 0) << bsp::testing::describe(off);
  EXPECT_NE(::access((dir + "/known_supersteps.prof").c_str(), F_OK), 0) << "BSP_PROFILE= still profiled";
}

INSTANTIATE_TEST_SUITE_P(Transports, KnownSupersteps, ::testing::Values("shm", "tcp", "udp", "nic"),
                         [](const auto& info) { return info.param; });

// A ring of 4-byte puts: no superstep has h >= 8 words, so g over time has no point.
// bspprof still draws every graph (the empty one saying why) and exits 0.
TEST(SmallMessages, ProfileOfTinyPutsRenders) {
  std::string dir = temporary_dir();
  std::string file = dir + "/ring.prof";
  ProgramResult run = run_program(
      {kBsprun, "-n", "4", "--transport=shm", "--profile=" + file, "tests/profile/ring_small_puts"},
      std::chrono::seconds(60));
  ASSERT_EQ(run.exit_code, 0) << bsp::testing::describe(run);
  for (std::string model : {"--slg=100,5000,40", ""}) {  // with a model, and without (no params.csv here)
    std::string out = dir + "/report" + (model.empty() ? "_none" : "_slg");
    std::vector<std::string> argv = {kBspprof, file, "--out=" + out};
    if (!model.empty()) argv.push_back(model);
    ProgramResult report = run_program(argv, std::chrono::seconds(60));
    ASSERT_EQ(report.exit_code, 0) << bsp::testing::describe(report);
    for (const char* kind : {".png", ".svg"}) {
      struct stat g {};
      EXPECT_EQ(::stat((out + "/g_over_time" + kind).c_str(), &g), 0) << kind;
      EXPECT_GT(g.st_size, 1000) << kind;
    }
    std::ifstream svg(out + "/g_over_time.svg");
    std::stringstream text;
    text << svg.rdbuf();
    EXPECT_NE(text.str().find("too little traffic for g to mean anything"), std::string::npos)
        << text.str().substr(0, 2000);
  }
}

// The lines of a NAS report that are results, not timings or packet counts.
std::vector<std::string> result_lines(const std::string& out) {
  std::vector<std::string> lines;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    bool timing = false;
    for (const char* word :
         {"ime", "Mop/s", "data ", "acks", "dropped", "duplicates", "Communication", "Computation"}) {
      timing = timing || line.find(word) != std::string::npos;
    }
    if (!timing && line.find_first_of("0123456789") != std::string::npos) lines.push_back(line);
  }
  return lines;
}

TEST(NasClassS, ProfilingChangesNoResult) {
  for (const char* kernel : {"cg", "is"}) {
    std::vector<std::string> base = {kBsprun, "-n", "4", "--transport=tcp"};
    std::vector<std::string> plain = base, profiled = base;
    std::string file = temporary_dir() + "/nas.prof";
    profiled.push_back("--profile=" + file);
    for (auto* argv : {&plain, &profiled}) {
      argv->push_back(std::string("nas/") + kernel + "/" + kernel);
      argv->push_back("--class=S");
    }
    ProgramResult a = run_program(plain, std::chrono::seconds(120));
    ProgramResult b = run_program(profiled, std::chrono::seconds(120));
    ASSERT_EQ(a.exit_code, 0) << bsp::testing::describe(a);
    ASSERT_EQ(b.exit_code, 0) << bsp::testing::describe(b);
    EXPECT_NE(b.out.find("SUCCESSFUL"), std::string::npos) << b.out;
    std::vector<std::string> ra = result_lines(a.out), rb = result_lines(b.out);
    EXPECT_GT(ra.size(), 3u) << a.out;
    EXPECT_EQ(ra, rb) << kernel;
    std::vector<ProcessTrace> traces = read_trace_file(file);
    ASSERT_EQ(traces.size(), 4u);
    EXPECT_GT(traces[0].steps.size(), 3u);
  }
}

}  // namespace
