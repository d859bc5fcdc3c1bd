// tests/security/victim.cc: the BSPlib program the security tests attack. It runs many
// supersteps for a few seconds and checks every byte it receives every superstep; any
// wrong byte stops the job with bsp_abort. Each superstep, process s
//   - puts 64 words to every other process (block s of its `small` area),
//   - puts 20000 bytes to its right neighbour (several frames on udp and nic),
//   - gets 256 bytes its left neighbour wrote into its `exposed` area this superstep,
//   - sends its right neighbour one 100-byte BSMP message with a 4-byte tag,
//   - (pid 0) tells everyone whether to go on: until --seconds have passed and at least
//     --min-supersteps were made.
// Every value is a function of (superstep, sender, receiver, index), so a frame replayed
// from an earlier superstep or forged by someone else would show.
//
// Options: --seconds=S (3), --min-supersteps=N (20), --ready-dir=DIR (after bsp_begin
// each process writes DIR/ready.<pid> holding its OS pid: the tests start attacking and
// look at its descriptors then), --stagger-ms=M (process k waits k x M ms before
// bsp_begin, so each process's data-plane set-up stays open while the later ones come).
// Output: "victim pid <s>: <n> supersteps verified" from each process.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bsplib/bsp.h"

namespace {

constexpr int kSmallWords = 64;
constexpr int kLargeBytes = 20000;
constexpr int kExposedBytes = 256;
constexpr int kMessageBytes = 100;

std::uint32_t mix(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x7FEB352Du;
  x ^= x >> 15;
  x *= 0x846CA68Bu;
  x ^= x >> 16;
  return x;
}

std::uint32_t value(long step, int from, int to, int index, int what) {
  return mix(static_cast<std::uint32_t>(step) * 0x9E3779B1u ^
             mix(static_cast<std::uint32_t>(from) << 20 ^ static_cast<std::uint32_t>(to) << 8 ^
                 static_cast<std::uint32_t>(what)) ^
             static_cast<std::uint32_t>(index) * 0x85EBCA77u);
}

std::uint8_t byte(long step, int from, int to, int index, int what) {
  return static_cast<std::uint8_t>(value(step, from, to, index / 4, what) >> (8 * (index % 4)));
}

[[noreturn]] void wrong(long step, const char* what, int from, int index) {
  bsp_abort("victim: pid %d superstep %ld: wrong %s from pid %d at index %d\n", bsp_pid(), step, what, from, index);
  std::abort();
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 3;
  long min_supersteps = 20;
  std::string ready_dir;
  int stagger_ms = 0;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--seconds=", 0) == 0) seconds = std::atof(arg.c_str() + 10);
    else if (arg.rfind("--min-supersteps=", 0) == 0) min_supersteps = std::atol(arg.c_str() + 17);
    else if (arg.rfind("--ready-dir=", 0) == 0) ready_dir = arg.substr(12);
    else if (arg.rfind("--stagger-ms=", 0) == 0) stagger_ms = std::atoi(arg.c_str() + 13);
  }
  if (stagger_ms > 0) {
    const char* launched_pid = std::getenv("BSP_PID");
    if (launched_pid) ::usleep(static_cast<useconds_t>(std::atoi(launched_pid) * stagger_ms) * 1000);
  }

  bsp_begin(bsp_nprocs());
  const int p = bsp_nprocs();
  const int s = bsp_pid();
  if (!ready_dir.empty()) {
    std::string path = ready_dir + "/ready." + std::to_string(s);
    std::string temporary = path + ".tmp";
    if (std::FILE* file = std::fopen(temporary.c_str(), "w")) {
      std::fprintf(file, "%d\n", static_cast<int>(::getpid()));
      std::fclose(file);
      std::rename(temporary.c_str(), path.c_str());
    }
  }

  std::vector<std::uint32_t> small(static_cast<std::size_t>(p) * kSmallWords);
  std::vector<std::uint8_t> large(kLargeBytes), exposed(kExposedBytes), got(kExposedBytes);
  int go = 1;
  bsp_push_reg(small.data(), static_cast<int>(small.size() * sizeof(std::uint32_t)));
  bsp_push_reg(large.data(), kLargeBytes);
  bsp_push_reg(exposed.data(), kExposedBytes);
  bsp_push_reg(&go, sizeof go);
  int tagsize = 4;
  bsp_set_tagsize(&tagsize);
  bsp_sync();

  const int right = (s + 1) % p, left = (s + p - 1) % p;
  std::vector<std::uint32_t> block(kSmallWords);
  std::vector<std::uint8_t> outgoing(kLargeBytes), message(kMessageBytes), arrived(kMessageBytes);
  long step = 0;
  for (;; ++step) {
    for (int i = 0; i < kExposedBytes; ++i) exposed[static_cast<std::size_t>(i)] = byte(step, s, s, i, 3);
    for (int t = 0; t < p; ++t) {
      if (t == s) continue;
      for (int i = 0; i < kSmallWords; ++i) block[static_cast<std::size_t>(i)] = value(step, s, t, i, 1);
      bsp_put(t, block.data(), small.data(), s * kSmallWords * static_cast<int>(sizeof(std::uint32_t)),
              kSmallWords * static_cast<int>(sizeof(std::uint32_t)));
    }
    if (p > 1) {
      for (int i = 0; i < kLargeBytes; ++i) outgoing[static_cast<std::size_t>(i)] = byte(step, s, right, i, 2);
      bsp_put(right, outgoing.data(), large.data(), 0, kLargeBytes);
      bsp_get(left, exposed.data(), 0, got.data(), kExposedBytes);
      for (int i = 0; i < kMessageBytes; ++i) message[static_cast<std::size_t>(i)] = byte(step, s, right, i, 4);
      std::uint32_t tag = static_cast<std::uint32_t>(step);
      bsp_send(right, &tag, message.data(), kMessageBytes);
    }
    if (s == 0) {
      int decision = (bsp_time() < seconds || step + 1 < min_supersteps) ? 1 : 0;
      for (int t = 0; t < p; ++t) bsp_put(t, &decision, &go, 0, sizeof decision);
    }
    bsp_sync();

    for (int t = 0; t < p; ++t) {
      if (t == s) continue;
      for (int i = 0; i < kSmallWords; ++i) {
        if (small[static_cast<std::size_t>(t * kSmallWords + i)] != value(step, t, s, i, 1))
          wrong(step, "put word", t, i);
      }
    }
    if (p > 1) {
      for (int i = 0; i < kLargeBytes; ++i) {
        if (large[static_cast<std::size_t>(i)] != byte(step, left, s, i, 2)) wrong(step, "put byte", left, i);
      }
      for (int i = 0; i < kExposedBytes; ++i) {
        if (got[static_cast<std::size_t>(i)] != byte(step, left, left, i, 3)) wrong(step, "get byte", left, i);
      }
      int messages = 0, bytes = 0;
      bsp_qsize(&messages, &bytes);
      if (messages != 1 || bytes != kMessageBytes) wrong(step, "message count", left, messages);
      int status = 0;
      std::uint32_t tag = 0;
      bsp_get_tag(&status, &tag);
      if (status != kMessageBytes || tag != static_cast<std::uint32_t>(step)) wrong(step, "message tag", left, status);
      bsp_move(arrived.data(), kMessageBytes);
      for (int i = 0; i < kMessageBytes; ++i) {
        if (arrived[static_cast<std::size_t>(i)] != byte(step, left, s, i, 4)) wrong(step, "message byte", left, i);
      }
    }
    if (!go) break;
  }
  std::printf("victim pid %d: %ld supersteps verified\n", s, step + 1);
  std::fflush(stdout);
  bsp_end();
  return 0;
}
