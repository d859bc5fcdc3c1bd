// tests/launch/start_report_test.cc: the start pipe between a launcher and its child
// (bsplib/launch/start_report.h), with real forks and execs: a child that enters
// bsp_begin, one whose exec fails, one that says nothing, and one that writes junk.
#include "bsplib/launch/start_report.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>

namespace {

using bsp::launch::StartReport;

// Forks a child that keeps the pipe across exec as a launcher's does, runs `child` in
// it, waits for it, and reads what it said.
StartReport report_of(const std::function<void(int write_fd)>& child) {
  bsp::launch::StartPipe pipe = bsp::launch::make_start_pipe();
  pid_t pid = ::fork();
  if (pid == 0) {
    bsp::launch::inherit_start_pipe(pipe.write_fd);
    child(pipe.write_fd);
    ::_exit(0);
  }
  ::close(pipe.write_fd);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return bsp::launch::read_start_report(pipe.read_fd);
}

TEST(StartReport, ABeginIsSaidAndTheDescriptorClosed) {
  StartReport said = report_of([](int write_fd) {
    bsp::launch::announce_begin();
    // Closed and the variable cleared: nothing the program starts later inherits it.
    if (::fcntl(write_fd, F_GETFD) != -1 || std::getenv(bsp::launch::kStartFdVariable)) ::_exit(3);
  });
  EXPECT_TRUE(said.began);
  EXPECT_EQ(said.exec_error, "");
}

TEST(StartReport, AFailedExecIsSaidWithItsError) {
  StartReport said = report_of([](int write_fd) {
    char* argv[] = {const_cast<char*>("/etc/passwd/not-a-program"), nullptr};
    ::execv(argv[0], argv);
    std::string why = std::string("cannot run /etc/passwd/not-a-program: ") + std::strerror(errno);
    bsp::launch::report_exec_failure(write_fd, why.c_str());
  });
  EXPECT_FALSE(said.began);
  EXPECT_EQ(said.exec_error, "cannot run /etc/passwd/not-a-program: Not a directory");
}

// A program that is not a BSPlib program execs fine and says nothing: neither.
TEST(StartReport, APlainProgramSaysNothing) {
  StartReport said = report_of([](int) {
    char* argv[] = {const_cast<char*>("/bin/true"), nullptr};
    ::execv(argv[0], argv);
  });
  EXPECT_FALSE(said.began);
  EXPECT_EQ(said.exec_error, "");
}

// Whatever a program writes to the descriptor is bounded and printable when printed.
TEST(StartReport, JunkIsBoundedAndMadePrintable) {
  StartReport said = report_of([](int write_fd) {
    std::string junk = "E\x1b[31mred\n";
    junk += std::string(100000, 'x');
    [[maybe_unused]] ssize_t ignored = ::write(write_fd, junk.data(), 60000);  // within the pipe's room
  });
  EXPECT_FALSE(said.began);
  EXPECT_EQ(said.exec_error.substr(0, 10), "?[31mred?x");
  EXPECT_LE(said.exec_error.size(), 1024u);
}

// A variable naming something that is not a pipe open for writing is left alone.
TEST(StartReport, AVariableNotNamingAPipeIsIgnored) {
  ::setenv(bsp::launch::kStartFdVariable, "1", 1);  // standard output: below 3
  bsp::launch::announce_begin();
  EXPECT_EQ(std::getenv(bsp::launch::kStartFdVariable), nullptr);
  ::setenv(bsp::launch::kStartFdVariable, "999999", 1);  // not open
  bsp::launch::announce_begin();
  EXPECT_EQ(std::getenv(bsp::launch::kStartFdVariable), nullptr);
}

}  // namespace
