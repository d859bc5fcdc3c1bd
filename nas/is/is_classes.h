// nas/is/is_classes.h: NPB IS's problem classes and the official ranks of its test keys,
// shared by the C (is.cc) and C++ (is_cpp.cc) versions.
#pragma once

#include <array>
#include <cstdint>

#include "nas/common/problem_class.h"

namespace nas::is {

inline constexpr int kIterations = 10;  // MAX_ITERATIONS
inline constexpr int kTests = 5;        // TEST_ARRAY_SIZE

struct IsClass {
  int total_keys_log2, max_key_log2, buckets_log2;
  std::array<std::int64_t, kTests> test_index, test_rank;
};

inline const nas::ClassTable<IsClass> kClasses = {
    {'S', {16, 11, 9, {48427, 17148, 23627, 62548, 4431}, {0, 18, 346, 64917, 65463}}},
    {'W', {20, 16, 10, {357773, 934767, 875723, 898999, 404505}, {1249, 11698, 1039987, 1043896, 1048018}}},
    {'A', {23, 19, 10, {2112377, 662041, 5336171, 3642833, 4250760}, {104, 17523, 123928, 8288932, 8388264}}},
    {'B', {25, 21, 10, {41869, 812306, 5102857, 18232239, 26860214}, {33422937, 10244, 59149, 33135281, 99}}},
    {'C',
     {27, 23, 10, {44172927, 72999161, 74326391, 129606274, 21736814}, {61147, 882988, 266290, 133997595, 133525895}}},
};

// How the official rank of test key `test` moves with the iteration, per class (the
// two keys changed each iteration sit below some test keys and above others).
inline std::int64_t expected_rank(char problem_class, int test, int iteration, std::int64_t official) {
  switch (problem_class) {
    case 'S':
      return test <= 2 ? official + iteration : official - iteration;
    case 'W':
      return test < 2 ? official + (iteration - 2) : official - iteration;
    case 'A':
      return test <= 2 ? official + (iteration - 1) : official - (iteration - 1);
    case 'B':
      return (test == 1 || test == 2 || test == 4) ? official + iteration : official - iteration;
    default:
      return test <= 2 ? official + iteration : official - iteration;  // C
  }
}

}  // namespace nas::is
