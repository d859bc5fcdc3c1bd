// tests/recovery/spin_policy_test.cc: the default spin before blocking: short while
// each process has a core, longer while up to 4 of the job's processes share each core,
// none beyond (who shares the machine: tests/machine_share_test.cc); the spin that goes
// on while only the job runs, taken where processes share cores and the census of who
// runs (tests/recovery/runnable_census_test.cc) is complete.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <memory>

#include "recovery/spin_policy.h"
#include "recovery/wait_for_fd.h"

namespace bsp::recovery {
namespace {

using std::chrono::microseconds;

TEST(SpinPolicyTest, SpinsUnlessTheHostIsCrowded) {
  EXPECT_EQ(default_spin_us(2, 2), kDefaultSpinUs);
  EXPECT_EQ(default_spin_us(16, 16), kDefaultSpinUs);
  EXPECT_EQ(default_spin_us(3, 2), kSharedCoreSpinUs);
  EXPECT_EQ(default_spin_us(8, 2), kSharedCoreSpinUs);
  EXPECT_EQ(default_spin_us(9, 2), 0);
  EXPECT_EQ(default_spin_us(64, 2), 0);
  EXPECT_EQ(default_spin_us(64, 16), kSharedCoreSpinUs);
  EXPECT_EQ(default_spin_us(1, 0), kDefaultSpinUs);  // an unknown core count counts as 1
  EXPECT_EQ(default_spin_us(3, 0), kSharedCoreSpinUs);
  EXPECT_GE(usable_cores(), 1);
}

TEST(SpinPolicyTest, SpinsOnWhereverItSpins) {
  EXPECT_TRUE(spins_on_idle_machine(1, 2));
  EXPECT_TRUE(spins_on_idle_machine(2, 2));  // a core each: the short spin goes on too
  EXPECT_TRUE(spins_on_idle_machine(3, 2));
  EXPECT_TRUE(spins_on_idle_machine(8, 2));
  EXPECT_FALSE(spins_on_idle_machine(9, 2));  // crowded: no spin at all
  EXPECT_TRUE(spins_on_idle_machine(kIdleMachineMaxProcesses, 8));
  EXPECT_FALSE(spins_on_idle_machine(kIdleMachineMaxProcesses + 1, 8));  // the census would cost too much
  EXPECT_GT(kIdleMachineSpinUs, kSharedCoreSpinUs);
}

TEST(SpinPolicyTest, NeedsACompleteCensus) {
  EXPECT_EQ(idle_machine_spin(nullptr).until_us, 0);
  const ProcessIdentity stranger{::getpid(), own_identity().start_ticks + 1};
  EXPECT_EQ(idle_machine_spin(std::make_shared<const RunnableCensus>(std::span(&stranger, 1))).until_us, 0);
  const ProcessIdentity self = own_identity();
  const SpinExtension extension = idle_machine_spin(std::make_shared<const RunnableCensus>(std::span(&self, 1)));
  EXPECT_EQ(extension.until_us, kIdleMachineSpinUs);
  EXPECT_FALSE(spin_may_go_on(SpinExtension{}));
}

// Without an extension, or past its end, or for a wait that did not spin, the spin ends
// where it was.
TEST(SpinPolicyTest, EndsWhereItWasWhenItMayNotGoOn) {
  microseconds spin(kSharedCoreSpinUs);
  EXPECT_FALSE(spin_goes_on(spin, SpinExtension{}, microseconds(1'000'000)));
  EXPECT_EQ(spin.count(), kSharedCoreSpinUs);
  const ProcessIdentity self = own_identity();
  const SpinExtension extension{kIdleMachineSpinUs, std::make_shared<const RunnableCensus>(std::span(&self, 1))};
  spin = microseconds(kIdleMachineSpinUs);
  EXPECT_FALSE(spin_goes_on(spin, extension, microseconds(1'000'000)));
  spin = microseconds(kSharedCoreSpinUs);
  EXPECT_FALSE(spin_goes_on(spin, extension, spin));  // the wait's timeout comes first
  spin = microseconds(0);
  EXPECT_FALSE(spin_goes_on(spin, extension, microseconds(1'000'000)));
  EXPECT_EQ(spin.count(), 0);
}

}  // namespace
}  // namespace bsp::recovery
