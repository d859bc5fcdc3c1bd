// tests/recovery/spin_policy_test.cc: the default spin before blocking: short while
// each process has a core, longer while up to 4 of the job's processes share each core,
// none beyond (who shares the machine: tests/machine_share_test.cc).
#include <gtest/gtest.h>

#include "recovery/spin_policy.h"

namespace bsp::recovery {
namespace {

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

}  // namespace
}  // namespace bsp::recovery
