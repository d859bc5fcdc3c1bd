// nas/is/key_generation.cc: the NPB IS key sequence (see key_generation.h).
#include "nas/is/key_generation.h"

#include "nas/common/randlc.h"

namespace nas::is {

void generate_keys(std::int64_t first, std::int64_t count, int max_key, int* keys) {
  double seed = kNpbSeed;
  if (first > 0) randlc(&seed, npb_power(kNpbMultiplier, 4 * first));
  const double scale = max_key / 4;
  double four[4];
  for (std::int64_t i = 0; i < count; ++i) {
    vranlc(4, &seed, kNpbMultiplier, four);
    double x = four[0];
    x += four[1];
    x += four[2];
    x += four[3];
    keys[i] = static_cast<int>(scale * x);
  }
}

}  // namespace nas::is
