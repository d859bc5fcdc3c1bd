// tests/security/files_test.cc: the files a job writes (--profile, --trace) in a
// directory another user can write to (docs/DESIGN.md §6). Run as root, in a directory
// of mode 0777 (no sticky bit, so the kernel's protected_symlinks does not step in);
// `nobody` (a forked child that drops to it) prepares the attack before the job runs:
//   a planted link: the name of a file the job will write is a symbolic link to a file
//     only root may read or write; the job must not write through it;
//   a pre-created file: nobody makes the file (mode 0666) and keeps it open; the job
//     must not write into that file, which nobody could then read.
// Without --overwrite the job must refuse, naming the file and saying how to overwrite;
// with it the job must replace the name (never the link's target) by a new file of
// root's, mode 0600. bspprof's report directory: a link planted at its name is refused.
//
// Found with this test (checked at fa3391b): the trace and the profile's parts were
// opened with O_CREAT | O_TRUNC, following a planted link (the root-only file was
// overwritten with the trace) and reusing nobody's file (which then held the job's
// frames, readable through nobody's descriptor).
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <functional>
#include <iterator>
#include <string>

#include "tests/run_program.h"
#include "tests/security/harness.h"

namespace bsp::security {
namespace {

using bsp::testing::describe;
using bsp::testing::ProgramResult;
using bsp::testing::run_program;

constexpr char kRootOnly[] = "root's own bytes, nobody else's\n";

// Runs `what` as nobody in a child; true when it returned true.
bool as_nobody(const std::function<bool()>& what) {
  pid_t child = ::fork();
  if (child == 0) {
    uid_t uid = 65534;
    gid_t gid = 65534;
    if (passwd* nobody = ::getpwnam("nobody")) {
      uid = nobody->pw_uid;
      gid = nobody->pw_gid;
    }
    if (::setgid(gid) != 0 || ::setuid(uid) != 0) ::_exit(2);
    ::_exit(what() ? 0 : 1);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

std::string contents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class SharedDirectory : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root: another user (nobody) plants the files";
    if (!bsp::testing::transport_usable(kBsprun, "udp")) GTEST_SKIP() << "udp is not built in";
    // Under /tmp: nobody must reach the shared directory, and TEST_TMPDIR may sit under
    // one only root may enter.
    dir_ = make_directory_in("/tmp", "bsp-shared");
    ASSERT_FALSE(dir_.empty());
    ASSERT_EQ(::chmod(dir_.c_str(), 0777), 0);                  // anyone may write; no sticky bit
    private_dir_ = make_directory_in("/tmp", "bsp-root-only");  // mode 0700
    ASSERT_FALSE(private_dir_.empty());
    root_only_ = private_dir_ + "/root-only";
    std::ofstream(root_only_) << kRootOnly;
    ASSERT_EQ(::chmod(root_only_.c_str(), 0600), 0);
  }
  void TearDown() override {
    if (!dir_.empty()) remove_directory(dir_);
    if (!private_dir_.empty()) remove_directory(private_dir_);
  }

  static std::string make_directory_in(const std::string& base, const std::string& prefix) {
    std::string pattern = base + "/" + prefix + "XXXXXX";
    if (!::mkdtemp(pattern.data())) return {};
    return pattern;
  }

  ProgramResult run_job(const std::vector<std::string>& options) {
    std::vector<std::string> argv = {kBsprun, "-n", "2", "--transport=udp"};
    argv.insert(argv.end(), options.begin(), options.end());
    argv.insert(argv.end(), {kVictim, "--seconds=0.5"});
    ProgramResult result = run_program(argv, std::chrono::seconds(60));
    std::cout << "[" << ::testing::UnitTest::GetInstance()->current_test_info()->name() << "] exit " << result.exit_code
              << "\n"
              << result.err.substr(0, 2000) << "\n";
    return result;
  }

  // The link nobody plants at `name` (in the shared directory), to the root-only file.
  void plant_link(const std::string& name) {
    const std::string link = dir_ + "/" + name;
    ASSERT_TRUE(as_nobody([&] { return ::symlink(root_only_.c_str(), link.c_str()) == 0; }));
  }

  // The file nobody makes at `name` and keeps open (returned: the test's descriptor on
  // the same file, standing for nobody's).
  int plant_file(const std::string& name) {
    const std::string path = dir_ + "/" + name;
    EXPECT_TRUE(as_nobody([&] {
      ::umask(0);
      int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0666);
      return fd >= 0 && ::close(fd) == 0;
    }));
    return ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  }

  void expect_root_only_intact() {
    struct stat info {};
    ASSERT_EQ(::lstat(root_only_.c_str(), &info), 0);
    const std::string now = contents(root_only_);
    EXPECT_TRUE(now == kRootOnly) << "the job wrote through the planted link into " << root_only_ << " (now "
                                  << now.size() << " bytes)";
  }

  void expect_refused(const ProgramResult& result, const std::string& name) {
    EXPECT_NE(result.exit_code, 0) << describe(result);
    EXPECT_NE(result.err.find(dir_ + "/" + name), std::string::npos) << "the message does not name the file\n"
                                                                     << describe(result);
    EXPECT_NE(result.err.find("exists"), std::string::npos) << describe(result);
    EXPECT_NE(result.err.find("--overwrite"), std::string::npos) << "the message does not say how to overwrite\n"
                                                                 << describe(result);
  }

  // After --overwrite: a new regular file of root's, mode 0600.
  void expect_replaced(const std::string& name) {
    struct stat info {};
    const std::string path = dir_ + "/" + name;
    ASSERT_EQ(::lstat(path.c_str(), &info), 0) << path;
    EXPECT_TRUE(S_ISREG(info.st_mode)) << path << " is not a regular file";
    EXPECT_EQ(info.st_uid, 0u) << path << " is not root's";
    EXPECT_EQ(info.st_mode & 07777, 0600u) << path;
    EXPECT_GT(info.st_size, 0) << path;
  }

  // A link nobody planted at `planted`: the job with `option` refuses it, and with
  // --overwrite puts its own file `replaced` there; the link's target is never written.
  void expect_link_survives(const std::string& option, const std::string& planted, const std::string& replaced) {
    plant_link(planted);
    ProgramResult refused = run_job({option});
    expect_root_only_intact();
    expect_refused(refused, planted);
    ProgramResult overwritten = run_job({option, "--overwrite"});
    EXPECT_EQ(overwritten.exit_code, 0) << describe(overwritten);
    expect_root_only_intact();
    expect_replaced(replaced);
  }

  // A file nobody made at `planted` and keeps open: the job with `option` refuses it, and
  // with --overwrite replaces the name; nobody's file receives nothing either way.
  void expect_file_untouched(const std::string& option, const std::string& planted, const std::string& replaced) {
    int nobodys = plant_file(planted);
    ASSERT_GE(nobodys, 0);
    ProgramResult refused = run_job({option});
    expect_empty(nobodys, planted);
    expect_refused(refused, planted);
    ProgramResult overwritten = run_job({option, "--overwrite"});
    EXPECT_EQ(overwritten.exit_code, 0) << describe(overwritten);
    expect_empty(nobodys, planted);
    expect_replaced(replaced);
    ::close(nobodys);
  }

  static void expect_empty(int nobodys, const std::string& name) {
    struct stat info {};
    ASSERT_EQ(::fstat(nobodys, &info), 0);
    EXPECT_EQ(info.st_size, 0) << "nobody's file " << name << " received " << info.st_size << " bytes of the job's";
  }

  std::string dir_;
  std::string private_dir_;  // root's alone: the root-only file, and where bspprof must not write
  std::string root_only_;
};

TEST_F(SharedDirectory, TraceDoesNotFollowAPlantedLink) {
  expect_link_survives("--trace=" + dir_ + "/job.pcap", "job.0.pcap", "job.0.pcap");
}

TEST_F(SharedDirectory, TraceDoesNotReuseAnotherUsersFile) {
  expect_file_untouched("--trace=" + dir_ + "/job.pcap", "job.1.pcap", "job.1.pcap");
}

TEST_F(SharedDirectory, ProfileDoesNotFollowAPlantedLink) {
  expect_link_survives("--profile=" + dir_ + "/job.prof", "job.prof.part0", "job.prof");
}

TEST_F(SharedDirectory, ProfileDoesNotReuseAnotherUsersFile) {
  // A part, then the profile itself (refused before the job runs).
  int nobodys = plant_file("job.prof.part1");
  ASSERT_GE(nobodys, 0);
  ProgramResult refused = run_job({"--profile=" + dir_ + "/job.prof"});
  expect_empty(nobodys, "job.prof.part1");
  expect_refused(refused, "job.prof.part1");
  ::close(nobodys);
  ::unlink((dir_ + "/job.prof.part1").c_str());
  expect_file_untouched("--profile=" + dir_ + "/job.prof", "job.prof", "job.prof");
}

TEST_F(SharedDirectory, BspprofRefusesALinkedReportDirectory) {
  ProgramResult job = run_job({"--profile=" + private_dir_ + "/job.prof"});
  ASSERT_EQ(job.exit_code, 0) << describe(job);
  const std::string report = dir_ + "/report";
  ASSERT_TRUE(as_nobody([&] { return ::symlink(private_dir_.c_str(), report.c_str()) == 0; }));
  ProgramResult drawn = run_program(
      {"tools/bspprof/bspprof", private_dir_ + "/job.prof", "--no-plots", "--out=" + report}, std::chrono::seconds(60));
  EXPECT_NE(drawn.exit_code, 0) << describe(drawn);
  EXPECT_NE(drawn.err.find(report), std::string::npos) << describe(drawn);
  struct stat info {};
  EXPECT_NE(::lstat((private_dir_ + "/supersteps.csv").c_str(), &info), 0) << "bspprof wrote through the link";
}

}  // namespace
}  // namespace bsp::security
