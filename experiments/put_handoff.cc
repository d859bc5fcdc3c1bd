// experiments/put_handoff.cc: what a large bsp_put's two copies can cost at best between two
// cores, with no library in the way. Two threads pinned to two CPUs stand for the
// sender and the receiver; each round one scheme moves --size bytes, and the median time
// per scheme is printed with floor ÷ scheme (the ratio bsp_bandwidth reports as put ÷
// memcpy). The floor's rounds run right before each scheme's: one core copies the source
// into a destination of its own, back to back (bsp_bandwidth --floor's memcpy). Schemes:
//   handoff   the sender copies the source into a capture buffer (bsp_put's copy at the
//             call), then the receiver copies the capture into the destination (its
//             copy when it applies the superstep): what shm's put does today;
//   nt        handoff with non-temporal stores for the sender's copy;
//   one_core  both copies on the sender (it writes the destination itself);
//   split     the sender's copy, then both cores copy half of the capture each (the
//             sender writing part of the destination while the receiver applies);
//   pipelined the sender copies in 128 KiB pieces, publishing each, and the receiver
//             copies each piece into the destination as soon as it is published;
//   saved     pipelined, the receiver first saving the destination's old bytes of each
//             piece (as an early write must, to be undone).
// Run: bazel-bin/experiments/put_handoff [--size=8388608] [--rounds=200] [--huge]
#include <immintrin.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_flags.h"

namespace {
using Clock = std::chrono::steady_clock;

double micros(Clock::time_point since) {
  return std::chrono::duration<double, std::micro>(Clock::now() - since).count();
}

unsigned char* buffer(std::size_t size, bool huge) {
  const std::size_t align = 2u << 20;
  void* base = ::mmap(nullptr, size + align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) {
    std::perror("put_handoff: mmap");
    std::exit(1);
  }
  auto* start = reinterpret_cast<unsigned char*>((reinterpret_cast<std::uintptr_t>(base) + align - 1) & ~(align - 1));
  ::madvise(start, size, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
  std::memset(start, 1, size);  // every page mapped before timing
  return start;
}

[[gnu::target("avx2")]] void copy_non_temporal(void* to, const void* from, std::size_t size) {
  auto* out = static_cast<__m256i*>(to);
  const auto* in = static_cast<const __m256i*>(from);
  for (std::size_t k = 0; k < size / 32; ++k) _mm256_stream_si256(out + k, _mm256_loadu_si256(in + k));
  std::memcpy(static_cast<unsigned char*>(to) + size / 32 * 32,
              static_cast<const unsigned char*>(from) + size / 32 * 32, size % 32);
  _mm_sfence();
}

bool pin(int core) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(core, &set);
  return ::pthread_setaffinity_np(::pthread_self(), sizeof set, &set) == 0;
}

enum class Scheme { handoff, nt, one_core, split, pipelined, saved };
constexpr std::size_t kPiece = 128u << 10;
}  // namespace

int main(int argc, char** argv) {
  if (bench::wants_help(argc, argv,
                        "usage: bazel-bin/experiments/put_handoff [--size=8388608] [--rounds=200] [--huge]\n"
                        "  a bsp_put's two copies between two pinned cores against one memcpy (see the top of\n"
                        "  experiments/put_handoff.cc); prints scheme,median_us,floor_median_us,floor_over_scheme\n")) {
    return 0;
  }
  bench::Flags flags(argc, argv);
  const auto size = static_cast<std::size_t>(flags.number("size", 8 << 20));
  const long rounds = flags.number("rounds", 200);
  bool huge = false;
  for (int i = 1; i < argc; ++i) huge |= std::string(argv[i]) == "--huge";
  // The first two CPUs this process may run on: the sender's and the receiver's.
  cpu_set_t allowed;
  std::vector<int> cores;
  if (::sched_getaffinity(0, sizeof allowed, &allowed) == 0) {
    for (int cpu = 0; cpu < CPU_SETSIZE && cores.size() < 2; ++cpu) {
      if (CPU_ISSET(cpu, &allowed)) cores.push_back(cpu);
    }
  }
  if (cores.size() < 2 || !pin(cores[0])) {
    std::printf("put_handoff: needs two CPUs to run on; skipped\n");
    return 0;
  }
  // The floor copies into its own destination (as bsp_bandwidth's memcpy into pid 0's window):
  // the receiver's lines stay the receiver's.
  unsigned char *source = buffer(size, huge), *capture = buffer(size, huge), *destination = buffer(size, huge),
                *floor_destination = buffer(size, huge), *saved = buffer(size, huge);
  std::atomic<std::size_t> published{0};  // pipelined: bytes of this round's capture written
  std::printf("scheme,median_us,floor_median_us,floor_over_scheme\n");
  for (Scheme scheme :
       {Scheme::handoff, Scheme::nt, Scheme::one_core, Scheme::split, Scheme::pipelined, Scheme::saved}) {
    std::atomic<long> turn{0};  // 2r + 1: the receiver's part of round r may start; 2r + 2: it is done
    std::vector<double> times, floors;
    std::thread receiver([&] {
      pin(cores[1]);
      for (long r = 0; r < rounds; ++r) {
        while (turn.load(std::memory_order_acquire) != 2 * r + 1) {
        }
        if (scheme == Scheme::pipelined || scheme == Scheme::saved) {
          for (std::size_t done = 0; done < size;) {
            std::size_t ready = published.load(std::memory_order_acquire);
            if (ready < size && ready < done + 4 * kPiece) continue;  // stay pieces behind the writer
            if (ready == done) continue;
            if (scheme == Scheme::saved) std::memcpy(saved + done, destination + done, ready - done);
            std::memcpy(destination + done, capture + done, ready - done);
            done = ready;
          }
        } else if (scheme == Scheme::split) {
          std::memcpy(destination + size / 2, capture + size / 2, size - size / 2);
        } else if (scheme != Scheme::one_core) {
          std::memcpy(destination, capture, size);
        }
        turn.store(2 * r + 2, std::memory_order_release);
      }
    });
    for (long r = 0; r < rounds; ++r) {  // the floor, on the sender's core, right before
      Clock::time_point start = Clock::now();
      std::memcpy(floor_destination, source, size);
      floors.push_back(micros(start));
    }
    for (long r = 0; r < rounds; ++r) {
      source[static_cast<std::size_t>(r) % size] = static_cast<unsigned char>(r);
      Clock::time_point start = Clock::now();
      if (scheme == Scheme::pipelined || scheme == Scheme::saved) {
        published.store(0, std::memory_order_release);
        turn.store(2 * r + 1, std::memory_order_release);
        for (std::size_t done = 0; done < size;) {
          std::size_t piece = std::min(kPiece, size - done);
          std::memcpy(capture + done, source + done, piece);
          done += piece;
          published.store(done, std::memory_order_release);
        }
      } else if (scheme == Scheme::nt) {
        copy_non_temporal(capture, source, size);
      } else {
        std::memcpy(capture, source, size);
      }
      if (scheme == Scheme::one_core) std::memcpy(destination, capture, size);
      if (scheme != Scheme::pipelined && scheme != Scheme::saved) turn.store(2 * r + 1, std::memory_order_release);
      if (scheme == Scheme::split) std::memcpy(destination, capture, size / 2);
      while (turn.load(std::memory_order_acquire) != 2 * r + 2) {
      }
      times.push_back(micros(start));
    }
    receiver.join();
    std::sort(times.begin(), times.end());
    std::sort(floors.begin(), floors.end());
    const char* names[] = {"handoff", "nt", "one_core", "split", "pipelined", "saved"};
    const double median = times[times.size() / 2], floor = floors[floors.size() / 2];
    std::printf("%s,%.1f,%.1f,%.2f\n", names[static_cast<int>(scheme)], median, floor, floor / median);
  }
  return 0;
}
