// nas/is/key_generation.h: NPB IS's keys. Key i of the global sequence is
// (MAX_KEY/4) * (r1 + r2 + r3 + r4), truncated, where r1..r4 are the stream's numbers
// 4i+1 .. 4i+4 (seed 314159265, multiplier 5^13): an approximately Gaussian spread over
// [0, MAX_KEY). A process generates only its own contiguous index range, starting its
// part of the stream by a jump-ahead, so the keys are the same for every process count.
#pragma once

#include <cstdint>

namespace nas::is {

// Writes keys [first, first + count) of the global sequence to keys.
void generate_keys(std::int64_t first, std::int64_t count, int max_key, int* keys);

}  // namespace nas::is
