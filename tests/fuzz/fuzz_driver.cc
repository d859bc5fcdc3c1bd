// tests/fuzz/fuzz_driver.cc: runs one fuzz target (fuzz_target.h) without libFuzzer, as a
// Bazel test: seeded pseudo-random inputs and mutations of the target's seeds, until
// FUZZ_INPUTS inputs (default 200000) or FUZZ_SECONDS seconds (default 20), whichever
// comes first. Deterministic for a given FUZZ_SEED (default fixed), so a failure repeats.
//
//   fuzz_driver                       the bounded run (what `bazel test` does)
//   fuzz_driver FILE...               runs the target on each file (reproduce a crash)
//   fuzz_driver --write-seeds DIR     writes the seeds as files (libFuzzer's corpus)
//
// A failing check or a sanitizer report prints the input in hex and, under Bazel, writes
// it to $TEST_UNDECLARED_OUTPUTS_DIR/crash-input.
#include <sys/stat.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_target.h"

#if defined(__SANITIZE_ADDRESS__)
#define BSP_FUZZ_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BSP_FUZZ_ASAN 1
#endif
#endif
#ifdef BSP_FUZZ_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

namespace {

const std::uint8_t* g_current = nullptr;
std::size_t g_current_size = 0;
std::uint64_t g_current_index = 0;

void dump_current_input() {
  if (!g_current) return;
  std::fprintf(stderr, "fuzz_driver: failing input #%" PRIu64 " (%zu bytes, hex):\n", g_current_index, g_current_size);
  for (std::size_t i = 0; i < g_current_size; ++i) {
    std::fprintf(stderr, "%02x%s", g_current[i], (i % 32 == 31 || i + 1 == g_current_size) ? "\n" : "");
  }
  if (const char* dir = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR")) {
    std::string path = std::string(dir) + "/crash-input";
    if (std::FILE* file = std::fopen(path.c_str(), "wb")) {
      std::fwrite(g_current, 1, g_current_size, file);
      std::fclose(file);
      std::fprintf(stderr, "fuzz_driver: input written to %s\n", path.c_str());
    }
  }
  g_current = nullptr;  // once
}

// SplitMix64: small, fast, good enough to pick mutations.
struct Random {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  std::size_t below(std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(next() % n); }
  bool chance(int percent) { return below(100) < static_cast<std::size_t>(percent); }
};

// Lengths the decoders compare against: zero, one, sign and size boundaries, the MTUs,
// the records' and control plane's limits.
const std::uint32_t kInteresting[] = {0,          1,
                                      2,          4,
                                      5,          7,
                                      8,          9,
                                      12,         13,
                                      16,         17,
                                      18,         31,
                                      32,         39,
                                      40,         41,
                                      127,        128,
                                      255,        256,
                                      1024,       1472,
                                      8192,       8193,
                                      65535,      65536,
                                      65537,      999999,
                                      1000000,    1000001,
                                      1u << 20,   (1u << 20) + 1,
                                      16u << 20,  (16u << 20) + 1,
                                      0x7FFFFFFF, 0x80000000,
                                      0xFFFFFFFE, 0xFFFFFFFF};

std::size_t random_length(Random& random) {
  switch (random.below(16)) {
    case 0:
      return random.below(70000);
    case 1:
    case 2:
    case 3:
      return random.below(2048);
    default:
      return random.below(96);
  }
}

std::vector<std::uint8_t> random_input(Random& random) {
  std::vector<std::uint8_t> input(random_length(random));
  for (auto& byte : input) byte = static_cast<std::uint8_t>(random.next());
  return input;
}

void mutate(std::vector<std::uint8_t>& input, const std::vector<std::vector<std::uint8_t>>& seeds, Random& random) {
  int rounds = 1 + static_cast<int>(random.below(random.chance(20) ? 16 : 4));
  for (int round = 0; round < rounds; ++round) {
    std::size_t size = input.size();
    switch (random.below(11)) {
      case 0:  // flip a bit
        if (size) input[random.below(size)] ^= static_cast<std::uint8_t>(1u << random.below(8));
        break;
      case 1:  // a random byte
        if (size) input[random.below(size)] = static_cast<std::uint8_t>(random.next());
        break;
      case 2: {  // an interesting byte
        static const std::uint8_t bytes[] = {0, 1, 2, 3, 4, 5, 6, 9, 0x7F, 0x80, 0xFE, 0xFF};
        if (size) input[random.below(size)] = bytes[random.below(sizeof bytes)];
        break;
      }
      case 3:
      case 4: {  // an interesting little-endian u32 (or u16) anywhere
        if (size < 2) break;
        std::uint32_t value = kInteresting[random.below(std::size(kInteresting))];
        if (random.chance(25)) value += static_cast<std::uint32_t>(random.below(9)) - 4;
        std::size_t width = size >= 4 && random.chance(75) ? 4 : 2;
        std::size_t at = random.below(size - width + 1);
        for (std::size_t i = 0; i < width; ++i) input[at + i] = static_cast<std::uint8_t>(value >> (8 * i));
        break;
      }
      case 5:  // truncate
        input.resize(random.below(size + 1));
        break;
      case 6: {  // delete a range
        if (!size) break;
        std::size_t at = random.below(size), count = 1 + random.below(std::min<std::size_t>(size - at, 64));
        input.erase(input.begin() + static_cast<std::ptrdiff_t>(at),
                    input.begin() + static_cast<std::ptrdiff_t>(at + count));
        break;
      }
      case 7: {  // insert random bytes
        std::size_t at = random.below(size + 1), count = 1 + random.below(random.chance(10) ? 4096 : 16);
        std::vector<std::uint8_t> bytes(count);
        for (auto& byte : bytes) byte = static_cast<std::uint8_t>(random.next());
        input.insert(input.begin() + static_cast<std::ptrdiff_t>(at), bytes.begin(), bytes.end());
        break;
      }
      case 8: {  // repeat a chunk
        if (!size) break;
        std::size_t at = random.below(size), count = 1 + random.below(std::min<std::size_t>(size - at, 256));
        std::vector<std::uint8_t> chunk(input.begin() + static_cast<std::ptrdiff_t>(at),
                                        input.begin() + static_cast<std::ptrdiff_t>(at + count));
        input.insert(input.begin() + static_cast<std::ptrdiff_t>(random.below(size + 1)), chunk.begin(), chunk.end());
        break;
      }
      case 9: {  // splice with another seed (keeps this one's mode byte)
        const auto& other = seeds[random.below(seeds.size())];
        if (other.size() < 2) break;
        std::size_t from = 1 + random.below(other.size() - 1);
        input.resize(random.below(size + 1));
        input.insert(input.end(), other.begin() + static_cast<std::ptrdiff_t>(from), other.end());
        break;
      }
      case 10:  // another mode
        if (size) input[0] = static_cast<std::uint8_t>(random.next());
        break;
    }
  }
}

void run_one(const std::vector<std::uint8_t>& input, std::uint64_t index) {
  // A heap block of exactly the input's size, as libFuzzer passes it.
  std::unique_ptr<std::uint8_t[]> exact(new std::uint8_t[input.size()]);
  if (!input.empty()) std::memcpy(exact.get(), input.data(), input.size());
  g_current = exact.get();
  g_current_size = input.size();
  g_current_index = index;
  LLVMFuzzerTestOneInput(exact.get(), input.size());
  g_current = nullptr;
}

long env_long(const char* name, long fallback) {
  const char* value = std::getenv(name);
  return value && *value ? std::strtol(value, nullptr, 10) : fallback;
}

}  // namespace

extern "C" void fuzz_check_failed(const char*, int, const char*) { dump_current_input(); }

int main(int argc, char** argv) {
#ifdef BSP_FUZZ_ASAN
  __sanitizer_set_death_callback(dump_current_input);
#endif
  const std::vector<std::vector<std::uint8_t>> seeds = fuzz_seeds();
  if (argc == 3 && std::string(argv[1]) == "--write-seeds") {
    ::mkdir(argv[2], 0755);
    for (std::size_t i = 0; i < seeds.size(); ++i) {
      std::ofstream out(std::string(argv[2]) + "/seed-" + std::to_string(i), std::ios::binary);
      out.write(reinterpret_cast<const char*>(seeds[i].data()), static_cast<std::streamsize>(seeds[i].size()));
    }
    std::printf("%zu seeds written to %s\n", seeds.size(), argv[2]);
    return 0;
  }
  if (argc > 1) {  // reproduce: run the given files
    for (int i = 1; i < argc; ++i) {
      std::ifstream in(argv[i], std::ios::binary);
      std::vector<std::uint8_t> input((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      run_one(input, static_cast<std::uint64_t>(i));
      std::printf("%s: %zu bytes: ok\n", argv[i], input.size());
    }
    return 0;
  }
  const long max_inputs = env_long("FUZZ_INPUTS", 200000);
  const double max_seconds = static_cast<double>(env_long("FUZZ_SECONDS", 20));
  const std::uint64_t seed = static_cast<std::uint64_t>(env_long("FUZZ_SEED", 20261124));
  Random random{seed};
  auto started = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(); };
  std::uint64_t index = 0, random_inputs = 0, mutated = 0;
  for (const auto& input : seeds) run_one(input, index++);
  std::uint64_t bytes = 0;
  while (index < static_cast<std::uint64_t>(max_inputs)) {
    if ((index & 255) == 0 && elapsed() >= max_seconds) break;
    std::vector<std::uint8_t> input;
    if (random.chance(20)) {
      input = random_input(random);
      if (!input.empty() && random.chance(50)) input[0] = seeds[random.below(seeds.size())][0];
      ++random_inputs;
    } else {
      input = seeds[random.below(seeds.size())];
      mutate(input, seeds, random);
      ++mutated;
    }
    bytes += input.size();
    run_one(input, index++);
  }
  std::printf("fuzz_driver: %" PRIu64 " inputs (%zu seeds, %" PRIu64 " random, %" PRIu64 " mutated; %" PRIu64
              " bytes) in %.1f s, FUZZ_SEED=%" PRIu64 ": no failure\n",
              index, seeds.size(), random_inputs, mutated, bytes, elapsed(), seed);
  return 0;
}
