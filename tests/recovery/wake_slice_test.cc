// tests/recovery/wake_slice_test.cc: the scheduler slice a BSP process asks for
// (recovery/wake_slice.h): in effect as the kernel reports it (/proc/self/sched too), the
// nice value and a chosen policy kept, not passed to children. Each case runs in a forked
// child so that the test process keeps its own scheduling.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "recovery/wake_slice.h"

namespace bsp::recovery {
namespace {

// Kernels from 6.12 take a per-task slice for the normal policy.
bool kernel_has_custom_slices() {
  utsname name{};
  if (::uname(&name) != 0) return false;
  int major = 0, minor = 0;
  if (std::sscanf(name.release, "%d.%d", &major, &minor) != 2) return false;
  return major > 6 || (major == 6 && minor >= 12);
}

// se.slice of /proc/self/sched, nanoseconds (-1: no such line).
long proc_slice_ns() {
  std::ifstream file("/proc/self/sched");
  for (std::string line; std::getline(file, line);) {
    if (line.rfind("se.slice", 0) == 0) return std::stol(line.substr(line.find(':') + 1));
  }
  return -1;
}

// Runs check in a forked child; its exit code: 0 passed, other values name the failed step.
int in_child(int (*check)()) {
  pid_t child = ::fork();
  if (child == 0) ::_exit(check());
  int status = 0;
  if (::waitpid(child, &status, 0) != child || !WIFEXITED(status)) return 100;
  return WEXITSTATUS(status);
}

TEST(WakeSlice, TheAskedSliceIsInEffectAndTheNiceValueKept) {
  if (!kernel_has_custom_slices()) GTEST_SKIP() << "the kernel takes no per-task slice (before 6.12)";
  EXPECT_EQ(in_child([] {
              if (::setpriority(PRIO_PROCESS, 0, 3) != 0) return 1;
              if (request_wake_slice(250) != 250) return 2;
              if (proc_slice_ns() != 250'000) return 3;
              if (::getpriority(PRIO_PROCESS, 0) != 3) return 4;
              if (wake_slice_us() != 250) return 5;
              return 0;
            }),
            0);
}

TEST(WakeSlice, OutOfRangeAsksAreBoundedAndZeroChangesNothing) {
  if (!kernel_has_custom_slices()) GTEST_SKIP() << "the kernel takes no per-task slice (before 6.12)";
  EXPECT_EQ(in_child([] {
              const int before = wake_slice_us();
              if (before <= 0) return 1;
              if (request_wake_slice(0) != before) return 2;
              if (request_wake_slice(1) != 100) return 3;              // the kernel's smallest
              if (request_wake_slice(1'000'000) != 100'000) return 4;  // and largest
              return 0;
            }),
            0);
}

TEST(WakeSlice, ChildrenStartWithTheKernelsDefault) {
  if (!kernel_has_custom_slices()) GTEST_SKIP() << "the kernel takes no per-task slice (before 6.12)";
  EXPECT_EQ(in_child([] {
              const int before = wake_slice_us();
              if (before == 100) return 1;  // the default must differ from the asked slice
              if (request_wake_slice(100) != 100) return 2;
              const int grandchild = in_child([] { return wake_slice_us() == 100 ? 1 : 0; });
              return grandchild == 0 ? 0 : 10 + grandchild;
            }),
            0);
}

TEST(WakeSlice, AChosenPolicyIsLeftAlone) {
  EXPECT_EQ(in_child([] {
              sched_param none{};
              if (::sched_setscheduler(0, SCHED_BATCH, &none) != 0) return 1;
              if (request_wake_slice(100) != 0) return 2;
              if (::sched_getscheduler(0) != SCHED_BATCH) return 3;
              return 0;
            }),
            0);
}

}  // namespace
}  // namespace bsp::recovery
