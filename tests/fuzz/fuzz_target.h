// tests/fuzz/fuzz_target.h: what every fuzz target in tests/fuzz defines, and the check
// they use. A target is one LLVMFuzzerTestOneInput per decoder, built two ways:
//   - with fuzz_driver.cc as a Bazel cc_test (seeded pseudo-random inputs and mutations
//     of the target's seeds, for a bounded number of inputs or seconds, under
//     AddressSanitizer and UndefinedBehaviorSanitizer), part of `bazel test //...`;
//   - with clang's libFuzzer (tests/fuzz/run_libfuzzer.sh), coverage-guided.
// Inputs reach the target in a heap block of exactly their size (both ways), so a read
// one byte past the input is a heap-buffer-overflow report. Targets that decode a part of
// the input copy that part into a block of its own exact size for the same reason.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

// Valid inputs (first byte: the target's mode) that the Bazel driver mutates and the
// libFuzzer script writes into the starting corpus.
std::vector<std::vector<std::uint8_t>> fuzz_seeds();

// Called by FUZZ_CHECK before it aborts; the Bazel driver prints the input in hex (weak:
// under libFuzzer nothing is needed, it saves the input as crash-<sha1>).
extern "C" void fuzz_check_failed(const char* file, int line, const char* what) __attribute__((weak));

#define FUZZ_CHECK(condition)                                                                 \
  do {                                                                                        \
    if (!(condition)) {                                                                       \
      std::fprintf(stderr, "%s:%d: FUZZ_CHECK failed: %s\n", __FILE__, __LINE__, #condition); \
      if (fuzz_check_failed) fuzz_check_failed(__FILE__, __LINE__, #condition);               \
      std::abort();                                                                           \
    }                                                                                         \
  } while (0)

namespace bsp::fuzz {

// A copy of bytes in a heap block of exactly their size (never nullptr, even for 0).
class ExactCopy {
 public:
  ExactCopy(const void* data, std::size_t size) : size_(size), bytes_(new std::byte[size]) {
    if (size) std::memcpy(bytes_.get(), data, size);
  }
  const std::byte* data() const { return bytes_.get(); }
  std::size_t size() const { return size_; }

 private:
  std::size_t size_;
  std::unique_ptr<std::byte[]> bytes_;
};

// Reads little pieces off the front of an input (zero once it is used up).
class Input {
 public:
  Input(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  std::uint8_t u8() { return size_ ? (--size_, *data_++) : 0; }
  std::uint16_t u16() { return static_cast<std::uint16_t>(u8() | (u8() << 8)); }
  std::uint32_t u32() { return u16() | (static_cast<std::uint32_t>(u16()) << 16); }
  const std::uint8_t* rest() const { return data_; }
  std::size_t left() const { return size_; }
  // The next n bytes (fewer if the input ends).
  std::vector<std::uint8_t> take(std::size_t n) {
    n = n < size_ ? n : size_;
    std::vector<std::uint8_t> out(data_, data_ + n);
    data_ += n;
    size_ -= n;
    return out;
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
};

inline void append_u32(std::vector<std::uint8_t>& out, std::uint32_t value) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(value >> (8 * i)));
}

}  // namespace bsp::fuzz
